"""The one base view of the agent runtime's internal API (/internal/agent/v1/), shared by the calls runtime
(calls/runtime/) and the meetings runtime (meetings/runtime/).

Order of checks: the service token (401 `unauthorized`, nothing read or written), then the org named in the
path (404 `not_found`, also for a value that is not a UUID), then the handler. No per-key rate limit (the
runtime is ours) and no public schema.
"""

from rest_framework.views import APIView

from api.parsers import JSONParser
from api.serializers import InputValidation
from orgs.models import Organization
from orgs.tenancy import get_or_not_found

from .authentication import IsRuntime, RuntimeTokenAuthentication


class RuntimeAPIView(InputValidation, APIView):
    """Token first and alone, then `self.org` from the path's `org_id`. Subclasses validate with `validate_body`
    (`InputValidation`, as /v1 views do)."""

    authentication_classes = [RuntimeTokenAuthentication]
    permission_classes = [IsRuntime]
    throttle_classes = []
    parser_classes = [JSONParser]
    schema = None  # internal: not part of the public /v1 reference

    org: Organization

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authentication and permission first
        # The org named in the path, or NotFound: a malformed id looks like a missing one.
        self.org = get_or_not_found(Organization, kwargs.get("org_id"))
