"""The one race harness: actions released at the same moment in their own threads, each on its own database
connection, as concurrent requests or workers would be."""

import threading

from django.db import connections


def run_together(*actions, timeout: float = 30.0) -> list:
    """Runs every action in its own thread, all released at once by a barrier, and returns what each returned, or
    the exception it raised, in the order given (so an unexpected error shows in the test's assertion, never only
    on stderr). Each thread closes its database connections. Fails when an action still runs after `timeout`
    seconds: a deadlock nothing broke."""
    barrier = threading.Barrier(len(actions))
    outcomes: list = [None] * len(actions)

    def run(index, action):
        try:
            barrier.wait(timeout)
            outcomes[index] = action()
        except Exception as exc:  # noqa: BLE001 - handed to the test, which names what it accepts
            outcomes[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(index, action)) for index, action in enumerate(actions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    stuck = [index for index, thread in enumerate(threads) if thread.is_alive()]
    assert not stuck, f"actions {stuck} still running after {timeout} s"
    return outcomes
