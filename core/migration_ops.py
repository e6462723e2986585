"""Operations that migrations moving a model between apps share (the table keeps its name; only Django's state
changes)."""

from django.db import migrations


def move_content_types(moved: dict[str, list[str]], to: str) -> migrations.RunPython:
    """The content types of `moved` ({old app label: [model names]}) follow their models to the app `to`, and so do
    permissions and admin history, unless a later run already made the new ones; backwards, they go back."""

    def forwards(apps, schema_editor):
        _relabel(apps, [(app_label, model, to) for app_label, models_ in moved.items() for model in models_])

    def backwards(apps, schema_editor):
        _relabel(apps, [(to, model, app_label) for app_label, models_ in moved.items() for model in models_])

    return migrations.RunPython(forwards, backwards)


def _relabel(apps, moves) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    for old, model, new in moves:
        if not ContentType.objects.filter(app_label=new, model=model).exists():
            ContentType.objects.filter(app_label=old, model=model).update(app_label=new)
