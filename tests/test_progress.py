"""Progress on stderr (issue 41.17): off a terminal a plain line every PLAIN_EVERY seconds,
however the work reports, and one clock for consecutive pieces of one job."""
import pytest

import onparse.progress as progress
from onparse.progress import Portion, Progress


@pytest.fixture()
def clock(monkeypatch):
    """A clock the test moves (stderr is pytest's capture: not a terminal)."""
    now = {"t": 500.0}
    monkeypatch.setattr(progress, "now", lambda: now["t"])
    monkeypatch.setattr(progress, "_shared", {"line": None, "closed": None})
    return now


def test_a_line_a_minute_and_none_before(clock, capsys):
    with Progress("work", 100, "lines") as bar:
        for _ in range(10):                      # 10 updates, 15 s apart: lines at 60 s and 120 s
            clock["t"] += 15
            bar.update(10)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["work: 40 of 100 lines (40%), about 1m30s left", "work: 80 of 100 lines (80%), about 30s left"]


def test_consecutive_work_shares_one_clock(clock, capsys):
    for k in range(3):                           # three 40-second pieces, one after another
        with Progress(f"piece {k}", 4, "steps") as bar:
            for _ in range(4):
                clock["t"] += 10
                bar.update(1)
    assert [line.split(":")[0] for line in capsys.readouterr().err.splitlines()] == ["piece 1", "piece 2"]
    clock["t"] += 3600                           # later work starts its own minute
    with Progress("later", 2) as bar:
        clock["t"] += 30
        bar.update(1)
    assert "later" not in capsys.readouterr().err


def test_quiet_and_untotalled_work(clock, capsys):
    with Progress("quiet", 5, quiet=True) as bar:
        clock["t"] += 120
        bar.update(5)
    with Progress("counting", None, "lines") as bar:
        clock["t"] += 61
        bar.update(7)
    assert capsys.readouterr().err == "counting: 7 lines in 1m01s\n"


def test_a_portion_moves_its_progress_as_finer_work_is_done():
    told = []
    part = Portion(told.append, 10, 30)         # 10 lines, 3 passes over their sentences
    for _ in range(6):
        part(5)
    part.finish()
    assert told == [1, 2, 2, 1, 2, 2] and sum(told) == 10
    Portion(None, 4, 0).finish()                 # nothing to tell: no error


def test_a_line_comes_even_when_no_update_does(monkeypatch, capsys):
    """41.17: one long batch (no update for minutes) still shows a line a minute: the timer
    prints it; close() stops the timer, so nothing is printed after the work."""
    import time

    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.2)
    monkeypatch.setattr(progress, "_shared", {"line": None, "closed": None})
    with Progress("slow", 10, "lines") as bar:
        bar.update(3)
        time.sleep(0.5)                          # no update: two timer periods pass
    printed = capsys.readouterr().err.splitlines()
    assert printed and all(line.startswith("slow: 3 of 10 lines (30%)") for line in printed)
    time.sleep(0.5)
    assert capsys.readouterr().err == ""         # closed: the timer is gone
