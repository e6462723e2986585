"""gunicorn's logger with the project's redaction (core.redaction.scrub) on its access and error logs: gunicorn
writes them through its own handlers, which Django's LOGGING never reaches, and a path can carry a link's token."""

from gunicorn.glogging import Logger

from .logging import ScrubFilter

_scrub = ScrubFilter()


class ScrubbingLogger(Logger):
    def setup(self, cfg):
        super().setup(cfg)
        for log in (self.access_log, self.error_log):
            log.addFilter(_scrub)  # once: addFilter ignores a filter already there (a config reload runs setup again)
