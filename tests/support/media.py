"""Where a test's stored files (recordings) go."""


def media_in(settings, folder) -> None:
    """The default storage writes under `folder` (a test's tmp_path), never to var/media; `settings` is
    pytest-django's fixture, which restores the setting after the test."""
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": folder}},
    }
