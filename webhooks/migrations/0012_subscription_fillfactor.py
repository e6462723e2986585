"""Every fair claim writes `claimed_at` (and, with a rate cap, `rate_tat`) on the subscriptions it serves: a small
table updated many times a second. fillfactor 50 leaves half of each page free, so those UPDATEs, which touch no
indexed column, stay HOT (no index entries, pruned within the page); at 100, a third of them were not HOT in a
four-process drain and the table grew to 22 MB for 16 rows on a server without autovacuum."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0011_subscription_locations")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE webhooks_subscription SET (fillfactor = 50)",
            "ALTER TABLE webhooks_subscription RESET (fillfactor)",
        ),
    ]
