"""BI clients against dpsql (issue 12): pymysql and SQLAlchemy as an analyst.

Usage: bi_clients.py PORT first|restart STATEFILE
Run with /usr/bin/python3 (Debian python3-pymysql, python3-sqlalchemy).
"""
import json
import sys

import pymysql
import sqlalchemy as sa

port, phase, state_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
passed = 0


def check(cond, what):
    global passed
    if not cond:
        print("BI clients FAILED:", what)
        sys.exit(1)
    passed += 1
    print(f"ok - {what}")


def analyst():
    return pymysql.connect(host="127.0.0.1", port=port, user="analyst", password="analyst", database="demo")


def spent(cur):
    cur.execute("SELECT epsilon_spent FROM dp_budget WHERE table_name = 'demo.iris'")
    return float(cur.fetchone()[0])


GROUPED = ("SELECT species, COUNT(*) AS n, AVG(petal_length_cm) AS mean_petal, SUM(petal_width_cm) AS s "
           "FROM iris WHERE sepal_length_cm > 4 GROUP BY species ORDER BY species")

if phase == "first":
    conn = analyst()
    cur = conn.cursor()
    # Public metadata.
    cur.execute("SHOW CREATE TABLE iris")
    check("petal_length_cm" in cur.fetchone()[1], "pymysql: SHOW CREATE TABLE on a protected table")
    cur.execute("SHOW FULL COLUMNS FROM iris")
    check(len(cur.fetchall()) == 5, "pymysql: SHOW FULL COLUMNS")
    cur.execute("SHOW INDEX FROM iris")
    cur.fetchall()
    check(True, "pymysql: SHOW INDEX")
    cur.execute("SELECT TRUE AS _ FROM demo.iris WHERE 1 <> 1 LIMIT 0")
    check(cur.fetchall() == () and cur.description[0][0] == "_", "pymysql: Metabase read probe answered empty")
    cur.execute("SHOW GRANTS FOR CURRENT_USER()")
    check(any("demo" in r[0] for r in cur.fetchall()), "pymysql: SHOW GRANTS FOR CURRENT_USER()")
    cur.execute("SELECT @@version_comment, VERSION(), @@port")
    comment, version, p = cur.fetchone()
    check(comment == "dpsql" and version == conn.get_server_info() and int(p) == port,
          f"pymysql: identity {comment} {version} port {p} (handshake {conn.get_server_info()})")
    s0 = spent(cur)

    # SQLAlchemy reflection (Superset datasets).
    eng = sa.create_engine(f"mysql+pymysql://analyst:analyst@127.0.0.1:{port}/demo")
    insp = sa.inspect(eng)
    cols = [c["name"] for c in insp.get_columns("iris")]
    check(cols[:2] == ["sepal_length_cm", "sepal_width_cm"], "SQLAlchemy: get_columns(iris)")
    insp.get_pk_constraint("iris")
    insp.get_indexes("iris")
    check(True, "SQLAlchemy: get_pk_constraint, get_indexes")
    check("dp_budget" in insp.get_view_names(), "SQLAlchemy: dp_* listed as views")
    md = sa.MetaData()
    md.reflect(bind=eng)
    check("iris" in md.tables and "breast_cancer" in md.tables, f"SQLAlchemy: MetaData.reflect() ({len(md.tables)} tables)")

    # DP GROUP BY through SQLAlchemy.
    with eng.connect() as c:
        c.execute(sa.text("SET SESSION dp_epsilon = 0.5"))
        rows = [tuple(r) for r in c.execute(sa.text(GROUPED))]
        check([r[0] for r in rows] == ["setosa", "versicolor", "virginica"], f"SQLAlchemy: DP GROUP BY -> {rows}")
        check(all(0 <= float(r[2]) <= 10 for r in rows), "DP AVG within the declared bounds")
        warnings = list(c.execute(sa.text("SHOW WARNINGS")))
        check(any("scale" in w[2] for w in warnings), "SHOW WARNINGS tells the noise scale")
        s1 = spent(cur)
        check(abs(s1 - s0 - 0.5) < 1e-9, f"charged once: spent {s0} -> {s1}")
        again = [tuple(r) for r in c.execute(sa.text(GROUPED))]
        check(again == rows and abs(spent(cur) - s1) < 1e-12, "answer cache: same answer, no charge")
        # Superset's wrapper and LIMIT.
        wrapped = list(c.execute(sa.text(f"SELECT * FROM ({GROUPED}) AS virtual_table LIMIT 1000")))
        check(len(wrapped) == 3, "Superset virtual_table wrapper")
        m = c.execute(sa.text("SELECT DP_MEAN('iris', 'petal_length_cm', 0.25) AS m LIMIT 1000")).scalar()
        check(0 <= m <= 10, "SELECT DP_MEAN(...) AS m LIMIT 1000 is one release")
        s2 = spent(cur)
        # Refused shapes charge nothing.
        for q in [
            "SELECT COUNT(*) FROM iris a JOIN wine b ON a.sepal_length_cm = b.alcohol",
            "SELECT species, MAX(petal_length_cm) FROM iris GROUP BY species",
            "SELECT COUNT(*) FROM iris WHERE species IN (SELECT species FROM new_flowers)",
            "SELECT DP_MEAN('iris', 'petal_length_cm', 0.1) FROM new_flowers",
            "SELECT sepal_length_cm, COUNT(*) FROM iris GROUP BY sepal_length_cm",
        ]:
            try:
                c.execute(sa.text(q)).fetchall()
                check(False, f"refused: {q}")
            except sa.exc.DBAPIError:
                check(True, f"refused: {q[:60]}")
        check(abs(spent(cur) - s2) < 1e-12, "refused shapes charged nothing")
    json.dump({"rows": [list(map(str, r)) for r in rows], "spent": spent(cur)}, open(state_file, "w"))
elif phase == "restart":
    st = json.load(open(state_file))
    conn = analyst()
    cur = conn.cursor()
    cur.execute("SET SESSION dp_epsilon = 0.5")
    cur.execute(GROUPED)
    rows = [list(map(str, r)) for r in cur.fetchall()]
    check(rows == st["rows"], "answer cache survives a restart")
    check(abs(spent(cur) - st["spent"]) < 1e-12, "no charge after the restart")
print(f"{passed} BI client checks passed")
