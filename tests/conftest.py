import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

# Property tests: a bounded run for CI, a long one on demand (HYPOTHESIS_PROFILE=ddplint-long).
_RELAXED = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
settings.register_profile("ddplint-ci", max_examples=100, deadline=None, suppress_health_check=_RELAXED)
settings.register_profile("ddplint-long", max_examples=5000, deadline=None, suppress_health_check=_RELAXED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ddplint-ci"))
