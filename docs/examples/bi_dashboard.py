"""A dashboard's queries against the dpsql demo, as an analyst (docs/bi.md).

    DPSQL_ROOT_PASSWORD=root ./dpsql serve --demo --data-dir /tmp/dpsql-bi --listen 127.0.0.1:3306 &
    /usr/bin/python3 docs/examples/bi_dashboard.py [PORT] [OUT.png]

Needs Debian python3-sqlalchemy python3-pymysql python3-pandas python3-matplotlib.
"""
import json
import sys

import pandas as pd
import sqlalchemy as sa

port = int(sys.argv[1]) if len(sys.argv) > 1 else 3306
out = sys.argv[2] if len(sys.argv) > 2 else "bi_histogram.png"
engine = sa.create_engine(f"mysql+pymysql://analyst:analyst@127.0.0.1:{port}/demo")

# 1. What a BI tool does first: reflect the schema (public for every analyst).
insp = sa.inspect(engine)
print("tables:", insp.get_table_names())
print("iris columns:", [c["name"] for c in insp.get_columns("iris")])

with engine.connect() as conn:
    # 2. The budget of each query (or an owner sets CALL dp_defaults('analyst', ε, δ)).
    conn.execute(sa.text("SET SESSION dp_epsilon = 1"))

    # 3. A grouped chart: counts and averages per species, with DP.
    q = """SELECT species, COUNT(*) AS n, AVG(petal_length_cm) AS petal_length, AVG(sepal_length_cm) AS sepal_length
           FROM iris GROUP BY species ORDER BY species"""
    df = pd.read_sql(sa.text(q), conn)
    print(df)
    for level, code, msg in conn.execute(sa.text("SHOW WARNINGS")):
        print("  ", msg)

    # 4. A dashboard refresh: the same query is answered from the cache, at no charge.
    before = conn.execute(sa.text("SELECT epsilon_spent FROM dp_budget WHERE table_name = 'demo.iris'")).scalar()
    again = pd.read_sql(sa.text(q), conn)
    after = conn.execute(sa.text("SELECT epsilon_spent FROM dp_budget WHERE table_name = 'demo.iris'")).scalar()
    print("refresh identical:", again.equals(df), "| ε spent before/after:", before, after)

    # 5. Superset's wrapper around the same query.
    wrapped = pd.read_sql(sa.text(f"SELECT * FROM ({q}) AS virtual_table LIMIT 1000"), conn)
    print("Superset wrapper rows:", len(wrapped))

    # 6. A DP histogram of a numeric column over public edges inside its declared bounds [0, 20].
    h = json.loads(conn.execute(sa.text(
        "SELECT DP_HISTOGRAM('wine', 'alcohol', 1, 'edges=11,11.5,12,12.5,13,13.5,14,14.5,15')")).scalar())
    print("histogram of wine.alcohol, Laplace scale", h["laplace_scale"], "n =", h["n"])
    hist = pd.DataFrame(h["bins"])
    print(hist[["label", "count"]])

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.bar(hist["label"], hist["count"].clip(lower=0), color="#4477aa")
ax.set_title(f"DP histogram of wine.alcohol (ε = 1, Laplace scale {h['laplace_scale']:g}, n = {h['n']})")
ax.set_xlabel("alcohol (% vol), public bins")
ax.set_ylabel("noisy count")
plt.xticks(rotation=30, ha="right")
plt.tight_layout()
plt.savefig(out, dpi=110)
print("wrote", out)
