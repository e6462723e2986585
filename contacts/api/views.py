"""/v1 views of contacts (the light CRM). Thin: validate, call a service or selector, render."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from api.docs import envelope, error_responses, list_envelope
from api.exports import ExportMixin, export_get
from api.serializers import serializer_item
from api.views import OrgAPIView, data_response, item_list_response
from contacts import selectors, services
from contacts.exports import CONTACT_COLUMNS
from contacts.models import Contact

from .serializers import ContactInputSerializer, ContactListParams, ContactSerializer

# One component per envelope: drf-spectacular warns about (and mis-renders) two inline serializers of one name.
CONTACT_RESPONSE = envelope(ContactSerializer)
ID_PARAMETER = OpenApiParameter(
    "id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The contact id. Another organization's id is 404."
)


class ContactListView(OrgAPIView):
    filter_params = ContactListParams
    time_field = "created_at"

    @extend_schema(
        operation_id="contacts_list",
        summary="List or search contacts",
        description="Newest first; cursor-paginated: pass `next_cursor` back as `cursor` while `has_more` is true. "
        "`limit` is 1 to 100 (default 20). `search` matches name and email case-insensitively, and phone numbers "
        "by digits (`415 555` finds +14155550100). Unknown query parameters are refused with 400.",
        parameters=[ContactListParams],
        responses={200: list_envelope(ContactSerializer), **error_responses(400)},
        tags=["Contacts"],
    )
    def get(self, request):
        params = self.validate_query(self.filter_params)
        return item_list_response(self.rows(params), params, item=serializer_item(ContactSerializer),
                                  time_field=self.time_field, scope="contacts")

    def rows(self, params: dict):
        """The contacts the query selects, unordered (paged here, streamed by the export)."""
        return selectors.contact_list(org=self.org, **self.filter_params.filters(params))

    @extend_schema(
        operation_id="contacts_create",
        summary="Create a contact",
        description="`phone_number` (at least 10 characters) is normalized to E.164 in the organization's default "
        "region, so `+1 (415) 555-0100` and `+14155550100` are the same number: a second contact with it gives "
        "409 `conflict` with `details.field` = `phone_number`. The contact's `source` is `api`. A key limited to "
        "locations gets the 409 only for a contact it can see; a number held by one it cannot see is answered as a "
        "creation (201, that contact's id), and that contact takes the fields it lacked (docs/api.md).",
        request=ContactInputSerializer,
        responses={201: CONTACT_RESPONSE, **error_responses(400, 403, 409)},
        tags=["Contacts"],
    )
    def post(self, request):
        data = self.validate_body(ContactInputSerializer)
        contact = services.contact_create(org=self.org, source=Contact.Source.API, **data)
        return data_response(ContactSerializer(contact).data, status=201)


class ContactDetailView(OrgAPIView):
    model = Contact

    @extend_schema(
        operation_id="contacts_retrieve",
        summary="Get a contact",
        parameters=[ID_PARAMETER],
        responses={200: CONTACT_RESPONSE, **error_responses(404)},
        tags=["Contacts"],
    )
    def get(self, request, id):
        return data_response(ContactSerializer(self.get_object(id)).data)

    @extend_schema(
        operation_id="contacts_partial_update",
        summary="Update a contact",
        description="Changes the fields given. A new `phone_number` is normalized like on create and may clash "
        "(409).",
        parameters=[ID_PARAMETER],
        request=ContactInputSerializer(partial=True),
        responses={200: CONTACT_RESPONSE, **error_responses(400, 403, 404, 409)},
        tags=["Contacts"],
    )
    def patch(self, request, id):
        contact = self.get_object(id)
        data = self.validate_body(ContactInputSerializer, partial=True)
        contact = services.contact_update(contact=contact, **data)
        return data_response(ContactSerializer(contact).data)


class ContactExportView(ExportMixin, ContactListView):
    export_name = "contacts"
    get = export_get("contacts", ContactListParams)

    def columns(self):
        return CONTACT_COLUMNS
