"""Settings shared by every test run from this repository."""

import os

from hypothesis import settings

# CI (which sets CI=true) replays the same examples every run, so a new
# hypothesis find shows up on a developer's machine, not as a flaky CI run.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
