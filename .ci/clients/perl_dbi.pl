#!/usr/bin/perl
# Client conformance (issue 29): Perl DBI with DBD::MariaDB (server-side
# prepares) against one server (dpsql or the reference MariaDB). Run by
# .ci/clients.sh; environment and output as in py_clients.py.
use strict;
use warnings;
use DBI;

my ($target, $port, $root_pw, $ana_pw) = @ENV{qw(TARGET PORT ROOT_PW ANA_PW)};
# Server-side prepares for the statements; metadata with DBI's default
# (client-side) prepares, as applications use it: the protocol library
# (vitess) parses a COM_STMT_PREPARE before dpsql sees it, so a prepared
# DESCRIBE t '%' (column_info) cannot be rewritten (docs/results/drivers.md).
my $dsn = "DBI:MariaDB:database=conf;host=127.0.0.1;port=$port;mariadb_server_prepare=1";
sub dbh { DBI->connect($dsn, $_[0], $_[1], { RaiseError => 1, PrintError => 0, AutoCommit => 1 }) }
sub dbh_default { DBI->connect("DBI:MariaDB:database=conf;host=127.0.0.1;port=$port", $_[0], $_[1], { RaiseError => 1, PrintError => 0, AutoCommit => 1 }) }
sub expect { die "$_[1]\n" unless $_[0] }
sub report {
  my ($check, $fn) = @_;
  if ($check =~ /^dp_/ && $target ne 'dpsql') { print "skip perl-dbi $check\n"; return }
  if (eval { $fn->(); 1 }) { print "ok perl-dbi $check\n" }
  else { my $m = $@; $m =~ s/\s+/ /g; print "not ok perl-dbi $check: " . substr($m, 0, 200) . "\n" }
}

report('connect', sub { expect(dbh('root', $root_pw)->selectrow_array('SELECT 1') == 1, 'SELECT 1') });
report('metadata', sub {
  my $db = dbh_default('root', $root_pw);
  my $sth = $db->prepare('SELECT id, v, name FROM nums WHERE id = 1');
  $sth->execute;
  expect(join(',', @{ $sth->{NAME} }) eq 'id,v,name', "names @{ $sth->{NAME} }");
  my @t = @{ $sth->{TYPE} };
  expect($t[0] == DBI::SQL_INTEGER && $t[1] == DBI::SQL_DOUBLE && $t[2] == DBI::SQL_VARCHAR, "types @t");
  $sth->finish;
  my $ci = $db->column_info(undef, 'conf', 'nums', '%');  # DESCRIBE nums '%' on DBD::MariaDB
  my $cols = $ci->fetchall_arrayref({});
  expect(@$cols == 3, 'column_info rows ' . scalar(@$cols));
  my @tables = $db->tables('', 'conf', '%', 'TABLE');
  expect(scalar(grep { /nums/ } @tables), "tables(): @tables");
});
report('rollback', sub {
  my $db = dbh('root', $root_pw);
  $db->do('DELETE FROM tx WHERE id = 301');
  $db->begin_work;
  $db->do('INSERT INTO tx VALUES (301)');
  $db->rollback;
  my ($n) = dbh('root', $root_pw)->selectrow_array('SELECT COUNT(*) FROM tx WHERE id = 301');
  $db->do('DELETE FROM tx WHERE id = 301');
  expect($n == 0, "rollback kept the row ($n)");
});
report('prepared_strings', sub {
  my $db = dbh('root', $root_pw);
  my ($name) = $db->selectrow_array('SELECT name FROM nums WHERE id = ?', undef, '2');
  expect(defined $name && $name eq 'two', "id bound as '2'");
  my ($x) = $db->selectrow_array('SELECT v * ? FROM nums WHERE id = ?', undef, '2', '1');
  expect($x == 1, "v * '2' = $x");
});
report('dp_call', sub {
  my ($m) = dbh('ana', $ana_pw)->selectrow_array("SELECT DP_MEAN('pts', 'v', ?)", undef, '0.5');
  expect(defined $m && $m >= 0 && $m <= 10, "DP_MEAN $m");
});
report('dp_aggregate', sub {
  my $db = dbh('ana', $ana_pw);
  $db->do('SET SESSION dp_epsilon = 0.5');
  my $rows = $db->selectall_arrayref('SELECT COUNT(*), AVG(v) FROM pts');
  expect(@$rows == 1 && $rows->[0][1] >= 0 && $rows->[0][1] <= 10, 'DP aggregate');
});
# Server-side prepares of DP aggregates (issue 27 item 4): the clause and
# the session path, a new value bound per execution.
report('dp_prepared', sub {
  my $db = dbh('ana', $ana_pw);
  for my $q ('SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.25) COUNT(*), AVG(v) FROM pts WHERE v >= ?',
             'SELECT COUNT(*), AVG(v) FROM pts WHERE v >= ?') {
    $db->do('SET SESSION dp_epsilon = 0.25') if $q !~ /DIFFERENTIAL_PRIVACY/;
    my $sth = $db->prepare($q);
    for my $lo (0, 5) {
      $sth->execute($lo);
      my $rows = $sth->fetchall_arrayref;
      expect(@$rows == 1 && $rows->[0][1] >= $lo - 3 && $rows->[0][1] <= 10, "v >= $lo: " . join(',', map { $_ // 'NULL' } @{ $rows->[0] || [] }));
    }
  }
});
