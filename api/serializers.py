"""Serializer building blocks shared by every JSON endpoint: /v1, the agent runtime's and the hooks."""

import functools

from django.db import models
from rest_framework import serializers
from rest_framework.settings import api_settings

from core.sqljson import model_item
from core.timefmt import DAY_RANGE_ERROR, iso_ms, supported_day


class TimestampField(serializers.DateTimeField):
    def to_representation(self, value):
        return iso_ms(value)


class RangeDateField(serializers.DateField):
    """A date that names one end of a filter or range (a query parameter, a replay's bounds): within core.timefmt's
    supported days, else 400 on it."""

    def to_internal_value(self, value):
        day = super().to_internal_value(value)
        if not supported_day(day):
            raise serializers.ValidationError(DAY_RANGE_ERROR)
        return day


class RangeDateTimeField(serializers.DateTimeField):
    """A date-time that names one end of a filter or range: on a supported day (core.timefmt), else 400 on it."""

    def to_internal_value(self, value):
        when = super().to_internal_value(value)
        if not supported_day(when):
            raise serializers.ValidationError(DAY_RANGE_ERROR)
        return when


class InputValidation:
    """How a JSON view reads its input, the /v1 API's (`OrgAPIView`) and the agent runtime's (`RuntimeAPIView`)
    alike: through a serializer, a `StrictInputSerializer` for bodies, or 400 `Validation failed` from the one error
    handler."""

    def validate_query(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.query_params)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def validate_body(self, serializer_class, *, partial: bool | None = None, **kwargs) -> dict:
        """`partial` defaults to whether this is a PATCH that the serializer lets send some fields only
        (`partial_on_patch`)."""
        if partial is None:
            partial = self.request.method == "PATCH" and getattr(serializer_class, "partial_on_patch", True)
        serializer = serializer_class(data=self.request.data, partial=partial, **kwargs)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


class StrictInputSerializer(serializers.Serializer):
    """Input serializer that rejects unknown keys (docs/api.md#errors), a body that is not a JSON object, and a JSON
    value of the wrong type where DRF would coerce it (`4155550100` for a string, `"true"` or `1` for a boolean,
    `"5"` for an integer): the body means what its JSON types say, as the schema states them.

    `partial_on_patch`: whether a PATCH may send some of the fields (the default) or must send them all, as
    `{"handled": ...}` must; `InputValidation.validate_body` and the OpenAPI schema both follow it."""

    partial_on_patch = True

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [
                "Expected a JSON object as the request body."
            ]})
        unknown = [key for key in data if key not in self.fields or self.fields[key].read_only]
        if unknown:
            names = ", ".join(f"'{key}'" for key in unknown)
            raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [
                f"Unrecognized key(s) in object: {names}"
            ]})
        wrong = {}
        for name, field in self.fields.items():
            if name in data:
                if message := wrong_json_type(field, data[name]):
                    wrong[name] = [message]
                else:
                    wrong.update({name + path: [message] for path, message in too_long(field, data[name]).items()})
        if not wrong:
            return super().to_internal_value(data)
        refused = {path.split(".", 1)[0] for path in wrong}
        try:  # the other fields' errors too, so that one answer names every problem
            super().to_internal_value({key: value for key, value in data.items() if key not in refused})
            others = {}
        except serializers.ValidationError as exc:
            others = {key: errors for key, errors in exc.detail.items() if key not in refused}
        raise serializers.ValidationError({**others, **wrong})


# The JSON type each coercing DRF field must receive; checked before DRF converts the value.
_JSON_TYPES = (
    (serializers.BooleanField, lambda value: isinstance(value, bool), "Expected a boolean."),
    (serializers.IntegerField,  # 2.0 is an integer in JSON Schema too
     lambda value: (isinstance(value, int) and not isinstance(value, bool))
     or (isinstance(value, float) and value.is_integer()), "Expected an integer."),
    (serializers.CharField, lambda value: isinstance(value, str), "Expected a string."),
)


def too_long(field, value) -> dict[str, str]:
    """Strings over their field's max_length as sent, by path ("" for the field, ".3" for a list's fourth item):
    DRF measures after trimming whitespace, so a long run of spaces would pass where the schema's maxLength says no."""
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        return {f".{position}{path}": message for position, item in enumerate(value)
                for path, message in too_long(field.child, item).items()}
    limit = getattr(field, "max_length", None)
    if isinstance(field, serializers.CharField) and isinstance(value, str) and limit is not None and len(value) > limit:
        return {"": f"Ensure this field has no more than {limit} characters."}
    return {}


def wrong_json_type(field, value) -> str | None:
    """Why `value` (parsed JSON) cannot be `field`'s input, or None. null is the field's own business (allow_null)."""
    if value is None:
        return None
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        for position, item in enumerate(value):
            if message := wrong_json_type(field.child, item):
                return f"Item {position}: {message}"
        return None
    for field_class, accepts, message in _JSON_TYPES:
        if isinstance(field, field_class):
            return None if accepts(value) else message
    return None


class OutputModelSerializer(serializers.ModelSerializer):
    """Output serializer whose timestamps follow the API's millisecond `Z` format."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.DateTimeField: TimestampField,
    }


@functools.cache
def serializer_item(serializer_class):
    """The item of an OutputModelSerializer: its Meta.fields, with its `sql_fields` for those not columns."""
    meta = serializer_class.Meta
    return model_item(meta.model, meta.fields, **getattr(serializer_class, "sql_fields", {}))
