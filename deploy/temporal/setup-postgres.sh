#!/bin/sh
# Creates Temporal's databases on the compose PostgreSQL and brings their
# schemas up to date. Safe to run on every start.
set -eu
tool="temporal-sql-tool --plugin postgres12 --ep ${POSTGRES_SEEDS} -u ${POSTGRES_USER} -p 5432"
schema=/etc/temporal/schema/postgresql/v12
for db in temporal temporal_visibility; do
  dir=temporal
  [ "$db" = temporal_visibility ] && dir=visibility
  $tool --db "$db" create || true
  $tool --db "$db" setup-schema -v 0.0 || true
  $tool --db "$db" update-schema -d "$schema/$dir/versioned"
done
