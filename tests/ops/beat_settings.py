"""Settings of the beats the beat tests start: the test settings with every entry shorter than a day every second,
so a test sees many periods; the daily entries stay daily."""

from voiceagent.test_settings import *  # noqa: F403
from voiceagent.test_settings import CELERY_BEAT_SCHEDULE, DAY

for _entry in CELERY_BEAT_SCHEDULE.values():
    if _entry["schedule"] < DAY:
        _entry["schedule"] = 1
