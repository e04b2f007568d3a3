"""BI clients against dpsql (issue 12): pymysql and SQLAlchemy as an analyst.

Usage: bi_clients.py PORT first|restart STATEFILE [ROOT_PASSWORD]
Run with /usr/bin/python3 (Debian python3-pymysql, python3-sqlalchemy).
"""
import json
import sys

import pymysql
import sqlalchemy as sa

port, phase, state_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
root_pw = sys.argv[4] if len(sys.argv) > 4 else "ci-root"
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
    check(cur.fetchall() == (), "pymysql: SHOW INDEX on a protected table without keys answers empty")
    cur.execute("SELECT TRUE AS _ FROM demo.iris WHERE 1 <> 1 LIMIT 0")
    check(cur.fetchall() == () and cur.description[0][0] == "_", "pymysql: Metabase read probe answered empty")
    cur.execute("SHOW GRANTS FOR CURRENT_USER()")
    check(any("demo" in r[0] for r in cur.fetchall()), "pymysql: SHOW GRANTS FOR CURRENT_USER()")
    cur.execute("SELECT @@version_comment, VERSION(), @@port")
    comment, version, p = cur.fetchone()
    check(comment == "dpsql" and version == conn.get_server_info() and int(p) == port,
          f"pymysql: identity {comment} {version} port {p} (handshake {conn.get_server_info()})")
    s0 = spent(cur)

    # A protected table with a primary key, a secondary and a unique index
    # (the owner makes it; the analyst reflects it).
    own = pymysql.connect(host="127.0.0.1", port=port, user="root", password=root_pw, database="demo")
    oc = own.cursor()
    oc.execute("CREATE TABLE shop (id INT PRIMARY KEY, sku VARCHAR(20), price DOUBLE, "
               "UNIQUE KEY sku_u (sku), KEY price_idx (price))")
    oc.execute("INSERT INTO shop VALUES " + ",".join(f"({i}, 'sku{i}', {i % 50})" for i in range(200)))
    oc.execute("CALL dp_bounds('shop', 'price', 0, 100)")
    oc.execute("CALL dp_protect('shop', 5, 0)")
    own.commit()
    own.close()

    # SQLAlchemy reflection (Superset datasets).
    eng = sa.create_engine(f"mysql+pymysql://analyst:analyst@127.0.0.1:{port}/demo")
    insp = sa.inspect(eng)
    cols = [c["name"] for c in insp.get_columns("iris")]
    check(cols[:2] == ["sepal_length_cm", "sepal_width_cm"], "SQLAlchemy: get_columns(iris)")
    check(insp.get_pk_constraint("iris")["constrained_columns"] == [], "SQLAlchemy: get_pk_constraint(iris): no key")
    pk = insp.get_pk_constraint("shop")
    check(pk["constrained_columns"] == ["id"], f"SQLAlchemy: get_pk_constraint(shop) on a protected table -> {pk}")
    idx = {i["name"]: (i["column_names"], bool(i["unique"])) for i in insp.get_indexes("shop")}
    check(idx.get("price_idx") == (["price"], False) and idx.get("sku_u") == (["sku"], True),
          f"SQLAlchemy: get_indexes(shop) -> {idx}")
    uq = [u["column_names"] for u in insp.get_unique_constraints("shop")]
    check(["sku"] in uq, f"SQLAlchemy: get_unique_constraints(shop) -> {uq}")
    cur.execute("SELECT index_name, column_name, cardinality FROM information_schema.STATISTICS "
                "WHERE table_schema = 'demo' AND table_name = 'shop' ORDER BY index_name")
    stats = sorted(cur.fetchall())
    check([r[:2] for r in stats] == [("PRIMARY", "id"), ("price_idx", "price"), ("sku_u", "sku")]
          and all(r[2] in (None, 0) for r in stats), f"pymysql: information_schema.STATISTICS of shop -> {stats}")
    cur.execute("SHOW KEYS FROM shop")
    check(sorted(r[2] for r in cur.fetchall()) == ["PRIMARY", "price_idx", "sku_u"], "pymysql: SHOW KEYS FROM shop")
    check("dp_budget" in insp.get_view_names(), "SQLAlchemy: dp_* listed as views")
    md = sa.MetaData()
    md.reflect(bind=eng)
    check("iris" in md.tables and "breast_cancer" in md.tables, f"SQLAlchemy: MetaData.reflect() ({len(md.tables)} tables)")
    shop = md.tables["shop"]
    check([c.name for c in shop.primary_key.columns] == ["id"]
          and {i.name for i in shop.indexes} >= {"price_idx"}, "SQLAlchemy: reflected shop has its primary key and indexes")

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
        # DP_HISTOGRAM as a table function: one release, one row per bin.
        hist = list(c.execute(sa.text("SELECT bin, count FROM DP_HISTOGRAM('iris', 'species', 0.25) AS h ORDER BY bin")))
        check([r[0] for r in hist] == ["setosa", "versicolor", "virginica"], f"DP_HISTOGRAM table function -> {hist}")
        s2 = spent(cur)
        # Refused shapes charge nothing.
        for q in [
            "SELECT COUNT(*) FROM iris a JOIN wine b ON a.sepal_length_cm = b.alcohol",
            "SELECT species, MAX(petal_length_cm) FROM iris GROUP BY species",
            "SELECT COUNT(*) FROM iris WHERE species IN (SELECT species FROM new_flowers)",
            "SELECT DP_MEAN('iris', 'petal_length_cm', 0.1) FROM new_flowers",
            "SELECT sepal_length_cm, COUNT(*) FROM iris GROUP BY sepal_length_cm",
            "SELECT COUNT(DISTINCT species) FROM iris",
            "SELECT * FROM DP_HISTOGRAM('iris', 'species', 0.1) AS h JOIN new_flowers f ON f.id = h.count",
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
