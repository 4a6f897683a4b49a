"""The identity of a run's training text: a digest of its word ids, kept in ``last.pt`` so that
``--resume`` on another text is refused, by any kind's loop."""
import hashlib

import numpy as np


def fingerprint(ids) -> str:
    """SHA-1 of a training id sequence (a 1-d tensor): resuming on a different text is refused."""
    return hashlib.sha1(ids.numpy().astype(np.int64).tobytes()).hexdigest()
