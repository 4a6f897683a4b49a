"""``python -m onparse.selection.worker JSON``: train one :class:`onparse.selection.runs.RunPlan`
in this process, as :func:`onparse.selection.runs.run_command` writes it (one JSON argument: the
plan and its :class:`onparse.training.options.RunOptions`).  Progress and the one-line summary go
to stderr and stdout as ``onparse train``'s do; exit 0 when the run ends, 130 when it was stopped
(Ctrl-C / SIGINT: it saved first), 1 for a data error, 2 for a bad setting, 3
(:data:`CANNOT_RESUME`) when the run's saved state cannot be read to resume it; an error is one
line on stderr (``onparse: ...``), never a traceback.
"""
from __future__ import annotations

import json
import sys
from typing import List, Optional

from ..errors import OnparseError
from ..training.options import RunOptions
from .runs import RunPlan, start_run

#: The exit status of a run asked to resume whose saved state (``last.pt``) cannot be read.
CANNOT_RESUME = 3


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        spec = json.loads(args[0])
        plan, options = RunPlan.from_dict(spec["plan"]), RunOptions(**spec["options"])
    except (IndexError, ValueError, KeyError, TypeError) as err:
        print(f"onparse.selection.worker: give one JSON argument with a plan and options ({err})", file=sys.stderr)
        return 2
    try:
        run = start_run(plan, options)        # reads the saved state when resuming
    except ValueError as err:                 # a bad setting (SettingError is one too)
        print(f"onparse: {err}", file=sys.stderr)
        return 2
    except OnparseError as err:
        print(f"onparse: {err}", file=sys.stderr)
        return CANNOT_RESUME if options.resume else 1
    try:
        result = run()
    except OnparseError as err:
        print(f"onparse: {err}", file=sys.stderr)
        return 1
    print(json.dumps(result.summary()))
    return 130 if result.stop_reason == "interrupted" else 0


if __name__ == "__main__":
    sys.exit(main())
