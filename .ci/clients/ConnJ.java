// Client conformance (issue 29): MariaDB Connector/J (libmariadb-java,
// server-side prepares) against one server (dpsql or the reference MariaDB).
// Run by .ci/clients.sh; environment and output as in py_clients.py.
import java.sql.*;

public class ConnJ {
    static String target = System.getenv("TARGET"), port = System.getenv("PORT");
    static String rootPw = System.getenv("ROOT_PW"), anaPw = System.getenv("ANA_PW");

    interface Check { void run() throws Exception; }

    static Connection conn(String user, String pw) throws SQLException {
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/conf?useServerPrepStmts=true", user, pw);
    }

    static void expect(boolean cond, String what) { if (!cond) throw new AssertionError(what); }

    static void report(String check, Check c) {
        if (check.startsWith("dp_") && !target.equals("dpsql")) { System.out.println("skip connector-j " + check); return; }
        try {
            c.run();
            System.out.println("ok connector-j " + check);
        } catch (Throwable e) {
            String m = String.valueOf(e.getMessage()).replaceAll("\\s+", " ");
            if (e instanceof SQLException) m = "[" + ((SQLException) e).getErrorCode() + "/" + ((SQLException) e).getSQLState() + "] " + m;
            System.out.println("not ok connector-j " + check + ": " + e.getClass().getSimpleName() + ": " + m.substring(0, Math.min(200, m.length())));
        }
    }

    public static void main(String[] args) {
        report("connect", () -> {
            try (Connection c = conn("root", rootPw); ResultSet r = c.createStatement().executeQuery("SELECT 1")) {
                expect(r.next() && r.getInt(1) == 1, "SELECT 1");
            }
        });
        report("metadata", () -> {
            try (Connection c = conn("root", rootPw)) {
                ResultSet r = c.createStatement().executeQuery("SELECT id, v, name FROM nums WHERE id = 1");
                ResultSetMetaData m = r.getMetaData();
                expect(m.getColumnCount() == 3 && m.getColumnLabel(1).equals("id") && m.getColumnLabel(3).equals("name"), "labels");
                expect(m.getColumnType(1) == Types.INTEGER && m.getColumnType(2) == Types.DOUBLE && m.getColumnType(3) == Types.VARCHAR,
                    "types " + m.getColumnType(1) + "," + m.getColumnType(2) + "," + m.getColumnType(3));
                expect(r.next() && r.getString(3).equals("one"), "row");
                DatabaseMetaData d = c.getMetaData();
                int n = 0;
                try (ResultSet cols = d.getColumns("conf", null, "nums", "%")) { while (cols.next()) n++; }
                expect(n == 3, "getColumns rows " + n);
                expect(!d.getDatabaseProductVersion().isEmpty(), "product version");
            }
        });
        report("rollback", () -> {
            try (Connection c = conn("root", rootPw)) {
                c.createStatement().execute("DELETE FROM tx WHERE id = 401");
                c.setAutoCommit(false);
                c.createStatement().execute("INSERT INTO tx VALUES (401)");
                c.rollback();
                c.setAutoCommit(true);
                int n;
                try (Connection o = conn("root", rootPw); ResultSet r = o.createStatement().executeQuery("SELECT COUNT(*) FROM tx WHERE id = 401")) {
                    r.next();
                    n = r.getInt(1);
                }
                c.createStatement().execute("DELETE FROM tx WHERE id = 401");
                expect(n == 0, "rollback() kept the row (" + n + ")");
            }
        });
        report("prepared_strings", () -> {
            try (Connection c = conn("root", rootPw)) {
                PreparedStatement p = c.prepareStatement("SELECT name FROM nums WHERE id = ?");
                p.setString(1, "2");
                ResultSet r = p.executeQuery();
                expect(r.next() && r.getString(1).equals("two"), "id bound as '2'");
                p = c.prepareStatement("SELECT v * ? FROM nums WHERE id = ?");
                p.setString(1, "2");
                p.setString(2, "1");
                r = p.executeQuery();
                expect(r.next() && r.getDouble(1) == 1.0, "v * '2'");
            }
        });
        report("dp_call", () -> {
            try (Connection c = conn("ana", anaPw)) {
                PreparedStatement p = c.prepareStatement("SELECT DP_MEAN('pts', 'v', ?)");
                p.setString(1, "0.5");
                ResultSet r = p.executeQuery();
                expect(r.next(), "a row");
                double m = r.getDouble(1);
                expect(m >= 0 && m <= 10, "DP_MEAN " + m);
            }
        });
        report("dp_aggregate", () -> {
            try (Connection c = conn("ana", anaPw)) {
                c.createStatement().execute("SET SESSION dp_epsilon = 0.5");
                ResultSet r = c.createStatement().executeQuery("SELECT COUNT(*), AVG(v) FROM pts");
                expect(r.next(), "a row");
                double m = r.getDouble(2);
                expect(m >= 0 && m <= 10 && !r.next(), "DP aggregate " + m);
            }
        });
    }
}
