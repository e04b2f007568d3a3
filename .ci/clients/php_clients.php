<?php
// Client conformance (issue 29): PHP PDO (pdo_mysql, server-side prepares)
// and mysqli against one server (dpsql or the reference MariaDB). Run by
// .ci/clients.sh; environment and output as in py_clients.py.
$target = getenv('TARGET');
$port = (int) getenv('PORT');
$rootPw = getenv('ROOT_PW');
$anaPw = getenv('ANA_PW');
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);

function report($client, $check, $fn) {
    global $target;
    if (strpos($check, 'dp_') === 0 && $target !== 'dpsql') { echo "skip $client $check\n"; return; }
    try {
        $fn();
        echo "ok $client $check\n";
    } catch (Throwable $e) {
        $msg = substr(preg_replace('/\s+/', ' ', $e->getMessage()), 0, 200);
        echo "not ok $client $check: " . get_class($e) . ": $msg\n";
    }
}
function expect($cond, $what) { if (!$cond) throw new Exception($what); }

function pdo($user, $pw) {
    global $port;
    return new PDO("mysql:host=127.0.0.1;port=$port;dbname=conf", $user, $pw,
        [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION, PDO::ATTR_EMULATE_PREPARES => false]);
}
$pdoChecks = [
    'connect' => function () use ($rootPw) {
        expect(pdo('root', $rootPw)->query('SELECT 1')->fetchColumn() == 1, 'SELECT 1');
    },
    'metadata' => function () use ($rootPw) {
        $st = pdo('root', $rootPw)->query('SELECT id, v, name FROM nums WHERE id = 1');
        $names = []; $types = [];
        for ($i = 0; $i < $st->columnCount(); $i++) { $m = $st->getColumnMeta($i); $names[] = $m['name']; $types[] = $m['native_type']; }
        expect($names === ['id', 'v', 'name'], 'names ' . implode(',', $names));
        expect($types === ['LONG', 'DOUBLE', 'VAR_STRING'], 'native types ' . implode(',', $types));
        $r = $st->fetch(PDO::FETCH_NUM);
        expect($r[0] == 1 && $r[1] == 0.5 && $r[2] === 'one', 'row ' . json_encode($r));
    },
    'rollback' => function () use ($rootPw) {
        $db = pdo('root', $rootPw);
        $db->exec('DELETE FROM tx WHERE id = 201');
        $db->beginTransaction();
        $db->exec('INSERT INTO tx VALUES (201)');
        $db->rollBack();
        $n = pdo('root', $rootPw)->query('SELECT COUNT(*) FROM tx WHERE id = 201')->fetchColumn();
        $db->exec('DELETE FROM tx WHERE id = 201');
        expect($n == 0, "rollBack() kept the row ($n)");
    },
    'prepared_strings' => function () use ($rootPw) {
        $st = pdo('root', $rootPw)->prepare('SELECT name FROM nums WHERE id = ?');
        $st->bindValue(1, '2', PDO::PARAM_STR);
        $st->execute();
        expect($st->fetchColumn() === 'two', "id bound as '2'");
        $st = pdo('root', $rootPw)->prepare('SELECT v * ? FROM nums WHERE id = ?');
        $st->execute(['2', '1']);
        expect((float) $st->fetchColumn() == 1.0, "v * '2'");
    },
    'dp_call' => function () use ($anaPw) {
        $st = pdo('ana', $anaPw)->prepare("SELECT DP_MEAN('pts', 'v', ?)");
        $st->execute(['0.5']);
        $m = (float) $st->fetchColumn();
        expect($m >= 0 && $m <= 10, "DP_MEAN $m");
    },
    'dp_aggregate' => function () use ($anaPw) {
        $db = pdo('ana', $anaPw);
        $db->exec("SET SESSION dp_epsilon = 0.5");
        $rows = $db->query('SELECT COUNT(*), AVG(v) FROM pts')->fetchAll(PDO::FETCH_NUM);
        expect(count($rows) == 1 && $rows[0][1] >= 0 && $rows[0][1] <= 10, 'DP aggregate ' . json_encode($rows));
    },
];
foreach ($pdoChecks as $name => $fn) report('pdo', $name, $fn);

function my($user, $pw) {
    global $port;
    return new mysqli('127.0.0.1', $user, $pw, 'conf', $port);
}
$mysqliChecks = [
    'connect' => function () use ($rootPw) {
        expect(my('root', $rootPw)->query('SELECT 1')->fetch_row()[0] == 1, 'SELECT 1');
    },
    'metadata' => function () use ($rootPw) {
        $db = my('root', $rootPw);
        $r = $db->query('SELECT id, v, name FROM nums WHERE id = 1');
        $names = []; $types = [];
        foreach ($r->fetch_fields() as $f) { $names[] = $f->name; $types[] = $f->type; }
        expect($names === ['id', 'v', 'name'], 'names ' . implode(',', $names));
        expect($types === [MYSQLI_TYPE_LONG, MYSQLI_TYPE_DOUBLE, MYSQLI_TYPE_VAR_STRING], 'types ' . implode(',', $types));
        expect($db->server_info !== '', 'server_info');
    },
    'rollback' => function () use ($rootPw) {
        $db = my('root', $rootPw);
        $db->query('DELETE FROM tx WHERE id = 202');
        $db->begin_transaction();
        $db->query('INSERT INTO tx VALUES (202)');
        $db->rollback();
        $n = my('root', $rootPw)->query('SELECT COUNT(*) FROM tx WHERE id = 202')->fetch_row()[0];
        $db->query('DELETE FROM tx WHERE id = 202');
        expect($n == 0, "rollback() kept the row ($n)");
    },
    'prepared_strings' => function () use ($rootPw) {
        $db = my('root', $rootPw); // kept: the statement needs its connection open
        $st = $db->prepare('SELECT name FROM nums WHERE id = ?');
        $id = '2';
        $st->bind_param('s', $id);
        $st->execute();
        expect($st->get_result()->fetch_row()[0] === 'two', "id bound as '2'");
    },
    'dp_call' => function () use ($anaPw) {
        $db = my('ana', $anaPw);
        $st = $db->prepare("SELECT DP_MEAN('pts', 'v', ?)");
        $e = '0.5';
        $st->bind_param('s', $e);
        $st->execute();
        $m = (float) $st->get_result()->fetch_row()[0];
        expect($m >= 0 && $m <= 10, "DP_MEAN $m");
    },
    'dp_aggregate' => function () use ($anaPw) {
        $db = my('ana', $anaPw);
        $db->query('SET SESSION dp_epsilon = 0.5');
        $rows = $db->query('SELECT COUNT(*), AVG(v) FROM pts')->fetch_all();
        expect(count($rows) == 1 && $rows[0][1] >= 0 && $rows[0][1] <= 10, 'DP aggregate ' . json_encode($rows));
    },
    // Server-side prepares of DP aggregates (issue 27 item 4): the clause
    // and the session path, a new value bound per execution; the columns
    // PREPARE announces are the ones EXECUTE sends.
    'dp_prepared' => function () use ($anaPw) {
        $db = my('ana', $anaPw);
        $fields = function ($res) { $o = []; foreach ($res->fetch_fields() as $f) $o[] = [$f->name, $f->type]; return $o; };
        foreach (['SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.25) COUNT(*) AS n, AVG(v) AS m FROM pts WHERE v >= ?',
                  'SELECT COUNT(*) AS n, AVG(v) AS m FROM pts WHERE v >= ?'] as $i => $q) {
            if ($i == 1) $db->query('SET SESSION dp_epsilon = 0.25');
            $st = $db->prepare($q);
            $meta = $fields($st->result_metadata());
            foreach ([0.0, 5.0] as $lo) {
                $st->bind_param('d', $lo);
                $st->execute();
                $res = $st->get_result();
                expect($fields($res) === $meta, 'PREPARE columns ' . json_encode($meta) . ', EXECUTE columns ' . json_encode($fields($res)));
                $rows = $res->fetch_all();
                expect(count($rows) == 1 && $rows[0][1] >= $lo - 3 && $rows[0][1] <= 10, "v >= $lo: " . json_encode($rows));
            }
            $st->close();
        }
    },
];
foreach ($mysqliChecks as $name => $fn) report('mysqli', $name, $fn);
