"""Values from the path and headers are checked against their columns (400, never a DataError 500); a recording
file never outlives a rolled-back upload; order numbers come from one upsert and stay unique under concurrency."""


import pytest
from django.db import IntegrityError

from calls.models import Call, Order, OrderCounter, Recording
from calls.services import orders, recordings
from tests.support.races import run_together
from tests.support.runtime import T0, Runtime, iso


def _validation_field(response, field):
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "Validation failed"
    assert field in body["details"]["fieldErrors"], body


@pytest.mark.parametrize("length", [129, 500])
def test_a_call_id_in_the_path_longer_than_its_column_is_400_and_nothing_is_written(runtime, org, length):
    call_id = "c" * length
    _validation_field(runtime.complete(call_id, started_at=iso(T0), outcome="info"), "call_id")
    _validation_field(runtime.event(call_id), "call_id")
    _validation_field(runtime.upload(call_id), "call_id")
    assert not Call.objects.exists() and not Recording.objects.exists()


def test_a_call_id_of_exactly_128_characters_works_on_every_path(runtime):
    call_id, response = runtime.start("c" * 128)
    assert response.status_code == 201
    assert runtime.event(call_id, label="Asked a question").status_code == 201
    assert runtime.complete(call_id, outcome="info").status_code == 200
    assert runtime.upload(call_id).status_code == 201


def test_a_content_type_longer_than_its_column_is_400_and_nothing_is_stored(runtime, tmp_path):
    call_id, _ = runtime.start()
    _validation_field(runtime.upload(call_id, content_type="audio/" + "x" * 95), "content_type")
    assert not Recording.objects.exists()
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]
    assert runtime.upload(call_id, content_type="audio/" + "x" * 94).status_code == 201  # exactly 100


def test_a_duration_beyond_its_column_is_400(runtime):
    call_id, _ = runtime.start()
    _validation_field(runtime.upload(call_id, duration=2_147_483_648), "duration_seconds")
    assert not Recording.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_failure_after_the_file_write_leaves_no_file_and_no_row(org, tmp_path, monkeypatch):
    call_id, _ = Runtime(org).start()

    def fail(**kwargs):
        raise IntegrityError("forced after the file was written")

    monkeypatch.setattr(recordings, "emit", fail)
    with pytest.raises(IntegrityError):
        recordings.recording_store(org=org, runtime_call_id=call_id, content=b"RIFF audio", content_type="audio/wav")
    assert not Recording.objects.exists()
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]

    monkeypatch.undo()
    recording, created = recordings.recording_store(
        org=org, runtime_call_id=call_id, content=b"RIFF audio", content_type="audio/wav"
    )
    assert created and recording.file.storage.exists(recording.file.name)


def test_the_order_number_is_one_statement(runtime, org, django_assert_num_queries):
    with django_assert_num_queries(1):
        assert orders._next_order_number(org) == 1
    with django_assert_num_queries(1):
        assert orders._next_order_number(org) == 2
    assert OrderCounter.objects.get(organization=org).last_number == 2


def test_the_order_numbers_of_a_new_org_count_from_one(org):
    assert [orders._next_order_number(org) for _ in range(3)] == [1, 2, 3]


@pytest.mark.django_db(transaction=True)
def test_concurrent_orders_of_a_new_org_get_distinct_numbers(org):
    """No counter row yet: the first upserts race on the insert, and every call still gets its own number."""
    ids = [Runtime(org).start()[0] for _ in range(6)]
    statuses = run_together(*(lambda call_id=call_id: Runtime(org).complete(call_id).status_code for call_id in ids))
    assert statuses == [200] * 6
    numbers = sorted(Order.objects.filter(organization=org).values_list("call_order_number", flat=True))
    assert numbers == [1, 2, 3, 4, 5, 6]
