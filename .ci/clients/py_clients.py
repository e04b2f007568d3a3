"""Client conformance (issue 29): pymysql, mysqlclient (MySQLdb) and SQLAlchemy
against one server (dpsql or the reference MariaDB). Run by .ci/clients.sh.

Environment: TARGET (dpsql|mariadb) PORT ROOT_PW ANA_PW. Prints one line per
check: "ok CLIENT CHECK", "not ok CLIENT CHECK: why" or "skip CLIENT CHECK"
(the DP checks only exist on dpsql).
"""
import os
import traceback

target = os.environ["TARGET"]
port = int(os.environ["PORT"])
root_pw, ana_pw = os.environ["ROOT_PW"], os.environ["ANA_PW"]
TX_ID = {"pymysql": 101, "mysqlclient": 102, "sqlalchemy": 103}


def report(client, check, fn):
    if check.startswith("dp_") and target != "dpsql":
        print(f"skip {client} {check}")
        return
    try:
        fn()
        print(f"ok {client} {check}")
    except Exception as e:  # any failure is a result, not a crash
        msg = " ".join(str(e).split())[:200] or traceback.format_exc().splitlines()[-1]
        print(f"not ok {client} {check}: {type(e).__name__}: {msg}")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def dbapi_checks(client, mod, connect):
    """The DB-API 2 checks shared by pymysql and MySQLdb."""

    def conn_root():
        return connect(user="root", password=root_pw, database="conf")

    def connect_check():
        c = conn_root()
        cur = c.cursor()
        cur.execute("SELECT 1")
        expect(cur.fetchone()[0] == 1, "SELECT 1")
        c.close()

    def metadata():
        c = conn_root()
        cur = c.cursor()
        cur.execute("SELECT id, v, name FROM nums WHERE id = 1")
        names = [d[0] for d in cur.description]
        expect(names == ["id", "v", "name"], f"column names {names}")
        types = [d[1] for d in cur.description]
        expect(types[0] in mod.NUMBER and types[1] in mod.NUMBER and types[2] in mod.STRING, f"column types {types}")
        expect(cur.fetchone() == (1, 0.5, "one"), "row")
        expect(c.get_server_info(), "server version")
        c.close()

    def rollback():
        c = conn_root()  # a default connection: the driver decides whether to send SET autocommit=0
        cur = c.cursor()
        cur.execute("DELETE FROM tx WHERE id = %s", (TX_ID[client],))
        c.commit()
        cur.execute("INSERT INTO tx VALUES (%s)", (TX_ID[client],))
        c.rollback()
        c.close()
        c = conn_root()
        cur = c.cursor()
        cur.execute("SELECT COUNT(*) FROM tx WHERE id = %s", (TX_ID[client],))
        n = cur.fetchone()[0]
        cur.execute("DELETE FROM tx WHERE id = %s", (TX_ID[client],))
        c.commit()
        c.close()
        expect(n == 0, f"rollback() kept the row ({n} rows after rollback)")

    def prepared_strings():
        c = conn_root()
        cur = c.cursor()
        cur.execute("SELECT name FROM nums WHERE id = %s", ("2",))
        expect(cur.fetchone()[0] == "two", "id bound as '2'")
        cur.execute("SELECT v * %s FROM nums WHERE id = %s", ("2", "1"))
        expect(float(cur.fetchone()[0]) == 1.0, "v * '2'")
        c.close()

    def dp_call():
        c = connect(user="ana", password=ana_pw, database="conf")
        cur = c.cursor()
        cur.execute("SELECT DP_MEAN('pts', 'v', %s)", ("0.5",))
        m = float(cur.fetchone()[0])
        expect(0 <= m <= 10, f"DP_MEAN {m} outside the bounds")
        c.close()

    def dp_aggregate():
        c = connect(user="ana", password=ana_pw, database="conf")
        cur = c.cursor()
        cur.execute("SET SESSION dp_epsilon = %s", ("0.5",))
        cur.execute("SELECT COUNT(*), AVG(v) FROM pts")
        rows = cur.fetchall()
        expect(len(rows) == 1 and 0 <= float(rows[0][1]) <= 10, f"DP aggregate {rows}")
        c.close()

    for name, fn in [("connect", connect_check), ("metadata", metadata), ("rollback", rollback),
                     ("prepared_strings", prepared_strings), ("dp_call", dp_call), ("dp_aggregate", dp_aggregate)]:
        report(client, name, fn)


import pymysql  # noqa: E402

dbapi_checks("pymysql", pymysql, lambda **kw: pymysql.connect(host="127.0.0.1", port=port, **kw))

import MySQLdb  # noqa: E402

dbapi_checks("mysqlclient", MySQLdb, lambda **kw: MySQLdb.connect(
    host="127.0.0.1", port=port, user=kw["user"], password=kw["password"], database=kw["database"]))

import sqlalchemy as sa  # noqa: E402


def engine(user, pw):
    return sa.create_engine(f"mysql+pymysql://{user}:{pw}@127.0.0.1:{port}/conf")


def sa_connect():
    with engine("root", root_pw).connect() as c:
        expect(c.execute(sa.text("SELECT 1")).scalar() == 1, "SELECT 1")


def sa_metadata():
    e = engine("root", root_pw)
    cols = {c["name"]: c for c in sa.inspect(e).get_columns("nums")}
    expect(list(cols) == ["id", "v", "name"], f"columns {list(cols)}")
    expect(isinstance(cols["id"]["type"], sa.Integer) and isinstance(cols["name"]["type"], sa.String),
           f"types {[str(c['type']) for c in cols.values()]}")
    t = sa.Table("nums", sa.MetaData(), autoload_with=e)
    with e.connect() as c:
        expect(c.execute(sa.select(t.c.name).where(t.c.id == 1)).scalar() == "one", "reflected select")


def sa_rollback():
    e = engine("root", root_pw)
    i = TX_ID["sqlalchemy"]
    with e.begin() as c:
        c.execute(sa.text("DELETE FROM tx WHERE id = :i"), {"i": i})
    with e.connect() as c:
        tx = c.begin()
        c.execute(sa.text("INSERT INTO tx VALUES (:i)"), {"i": i})
        tx.rollback()
    with e.begin() as c:
        n = c.execute(sa.text("SELECT COUNT(*) FROM tx WHERE id = :i"), {"i": i}).scalar()
        c.execute(sa.text("DELETE FROM tx WHERE id = :i"), {"i": i})
    expect(n == 0, f"Transaction.rollback() kept the row ({n})")


def sa_prepared_strings():
    with engine("root", root_pw).connect() as c:
        expect(c.execute(sa.text("SELECT name FROM nums WHERE id = :i"), {"i": "2"}).scalar() == "two", "id '2'")


def sa_dp_call():
    with engine("ana", ana_pw).connect() as c:
        m = float(c.execute(sa.text("SELECT DP_MEAN('pts', 'v', :e)"), {"e": "0.5"}).scalar())
        expect(0 <= m <= 10, f"DP_MEAN {m}")


def sa_dp_aggregate():
    with engine("ana", ana_pw).connect() as c:
        c.execute(sa.text("SET SESSION dp_epsilon = 0.5"))
        rows = c.execute(sa.text("SELECT COUNT(*), AVG(v) FROM pts")).fetchall()
        expect(len(rows) == 1 and 0 <= float(rows[0][1]) <= 10, f"DP aggregate {rows}")


for name, fn in [("connect", sa_connect), ("metadata", sa_metadata), ("rollback", sa_rollback),
                 ("prepared_strings", sa_prepared_strings), ("dp_call", sa_dp_call), ("dp_aggregate", sa_dp_aggregate)]:
    report("sqlalchemy", name, fn)
