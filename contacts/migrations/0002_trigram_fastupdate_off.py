from django.db import migrations

# Search reads must not scan a GIN pending list that grows between vacuums (a bulk import made `?search=` several
# times slower until autovacuum ran). Contacts are written far less often than searched, so pay at insert time.
INDEXES = ("contact_name_trgm", "contact_email_trgm", "contact_phone_digits_trgm")


class Migration(migrations.Migration):

    dependencies = [
        ("contacts", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(
            [f"ALTER INDEX IF EXISTS {name} SET (fastupdate = off)" for name in INDEXES],
            [f"ALTER INDEX IF EXISTS {name} RESET (fastupdate)" for name in INDEXES],
            elidable=False,
        ),
    ]
