#!/bin/sh
# Creates Temporal's databases on the compose PostgreSQL and brings their
# schemas up to date, from the schemas embedded in temporal-sql-tool (the
# image's own version), with the flags deploy/local/cluster/temporal.go
# uses. The password comes from SQL_PASSWORD. Safe to run on every start:
# create-database and setup-schema leave what exists alone, so any failure
# here is a real one.
set -eu
for db in temporal temporal_visibility; do
  schema=postgresql/v12/temporal
  [ "$db" = temporal_visibility ] && schema=postgresql/v12/visibility
  tool="temporal-sql-tool --plugin postgres12 --ep ${POSTGRES_SEEDS} -p 5432 -u ${POSTGRES_USER} --db $db"
  $tool create-database
  $tool setup-schema -v 0.0
  $tool update-schema --schema-name "$schema"
done
