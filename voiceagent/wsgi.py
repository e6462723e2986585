import os

from django.core.wsgi import get_wsgi_application

from .bodylimit import ChunkedBodyLimit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "voiceagent.settings")
application = ChunkedBodyLimit(get_wsgi_application())
