"""Migrating the test database to given nodes of the migration graph, for tests of migrations that must keep every
row (tests/*/test_*migration*.py)."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def graph():
    return MigrationExecutor(connection).loader.graph


def apps_at(targets):
    """The apps as they stand at `targets` (the models of that time), without migrating anything."""
    return MigrationExecutor(connection).loader.project_state([t for t in targets if t[1] is not None]).apps


def migrate(targets):
    """Migrates to `targets` ((app, name), or (app, None) to unapply the app) and returns the apps as they stand
    there, for rows written with the models of that time."""
    MigrationExecutor(connection).migrate(targets)
    return apps_at(targets)


def parents_outside(move) -> list:
    """The nodes just before the migrations of `move`, in each of their apps: where a test writes its rows."""
    nodes = graph().node_map
    return [parent.key for node in move for parent in nodes[node].parents
            if parent.key[0] == node[0] and parent.key not in move]


def schema(tables) -> dict:
    """Every column (name, type, nullability), index and constraint of `tables`, to compare before and after."""
    with connection.cursor() as cursor:
        return {
            table: ([(column.name, column.type_code, column.null_ok) for column in
                     connection.introspection.get_table_description(cursor, table)],
                    connection.introspection.get_constraints(cursor, table))
            for table in tables
        }
