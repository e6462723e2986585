"""Serializer building blocks shared by every JSON endpoint: /v1, the agent runtime's and the hooks."""

import functools

from django.db import models
from rest_framework import serializers
from rest_framework.settings import api_settings

from voiceagent.sqljson import model_item
from voiceagent.timefmt import iso_ms


class TimestampField(serializers.DateTimeField):
    def to_representation(self, value):
        return iso_ms(value)


class StrictInputSerializer(serializers.Serializer):
    """Input serializer that rejects unknown keys (docs/api.md#errors) and a body that is not a JSON object."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = [key for key in data if key not in self.fields or self.fields[key].read_only]
            if unknown:
                names = ", ".join(f"'{key}'" for key in unknown)
                raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [
                    f"Unrecognized key(s) in object: {names}"
                ]})
        else:
            raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [
                "Expected a JSON object as the request body."
            ]})
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and booleans instead of turning them into strings."""

    default_error_messages = {"invalid": "Expected a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


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
