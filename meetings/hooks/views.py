"""The progress hook of a dispatch: POST {status_url}, authenticated by the `token` query parameter alone.

POST /hooks/meeting-dispatches/{dispatch_id}/status?token=<token>
    {"state": "acked" | "done" | "failed", "detail"?: string (<= 5,000 characters)}
    200 {"data": {"dispatch_id", "state", "updated_at"}}: moved, or already in that state (a repeat).
    404 {"error": "not_found"}: unknown dispatch, wrong or missing token (indistinguishable; nothing changes).
    409 {"error": "invalid_transition"}: a move other than sent -> acked, acked -> done | failed.
    400 "Validation failed": a body that is not an object, an unknown key, a bad state or detail.

Outside /v1 (no API key, no per-key rate limit): the token in the URL is the credential. The token is checked
before the body, so a wrong token gets 404 whatever it sends.
"""

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from core.timefmt import iso_ms
from meetings.selectors import dispatch_for_token
from meetings.services import dispatch_report_progress

from .serializers import DispatchProgressSerializer


class DispatchStatusView(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    @extend_schema(exclude=True)
    def post(self, request, dispatch_id):
        token = request.query_params.get("token")
        # Authenticate before looking at the body, so a stranger learns nothing from validation errors. The
        # service checks the token again, under the row lock.
        if dispatch_for_token(dispatch_id=dispatch_id, token=token) is None:
            raise NotFound()
        serializer = DispatchProgressSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        dispatch = dispatch_report_progress(dispatch_id=dispatch_id, token=token, **serializer.validated_data)
        data = {"dispatch_id": str(dispatch.pk), "state": dispatch.state, "updated_at": iso_ms(dispatch.updated_at)}
        return Response({"data": data})
