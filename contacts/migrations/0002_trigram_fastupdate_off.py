from django.db import migrations

# Search reads must not scan a GIN pending list that grows between vacuums (a bulk import made `?search=` several
# times slower until autovacuum ran). Contacts are written far less often than searched, so pay at insert time.
INDEXES = ("contact_name_trgm", "contact_email_trgm", "contact_phone_digits_trgm")


def fastupdate_off(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"ALTER INDEX IF EXISTS {name} SET (fastupdate = off)")


def fastupdate_on(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"ALTER INDEX IF EXISTS {name} RESET (fastupdate)")


class Migration(migrations.Migration):

    dependencies = [
        ("contacts", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(fastupdate_off, fastupdate_on, elidable=False),
    ]
