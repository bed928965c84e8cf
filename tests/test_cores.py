"""cores.forked and forked_steps: a share of the work on a forked process, or here, with the same result either way."""

import os

import pytest

from graphrag_format_benchmark import cores


def pid_and(value):
    return os.getpid(), value * 2


def fails(message):
    raise ValueError(message)


def test_the_forked_share_runs_on_another_process_and_gives_its_result():
    if not cores.two_cores():
        pytest.skip("one core: nothing is forked")
    with cores.forked(pid_and, 21) as theirs:
        pid, value = theirs()
    assert pid != os.getpid() and value == 42 and cores._FORKED == ()


def test_without_a_fork_the_share_runs_here_once_when_asked(monkeypatch):
    calls = []
    monkeypatch.setattr(cores, "two_cores", lambda: False)
    with cores.forked(lambda v: calls.append(v) or (os.getpid(), v), 7) as theirs:
        assert calls == []  # nothing is done before it is asked for
        assert theirs() == (os.getpid(), 7) and theirs() == (os.getpid(), 7)
    assert calls == [7]
    monkeypatch.undo()
    with cores.forked(pid_and, 3, fork=False) as theirs:  # work too small for a fork
        assert theirs() == (os.getpid(), 6)


@pytest.mark.parametrize("fork", [True, False])
def test_an_error_of_the_share_is_raised_by_its_result(fork):
    with pytest.raises(ValueError, match="^no space$"):
        with cores.forked(fails, "no space", fork=fork) as theirs:
            theirs()
    assert cores._FORKED == ()


def steps_of(n):
    yield os.getpid()
    yield list(range(n))
    raise ValueError("after two steps")


def endless():
    yield os.getpid()
    while True:
        yield 0


@pytest.mark.parametrize("fork", [True, False])
def test_steps_come_in_order_then_the_error(fork, monkeypatch):
    if fork and not cores.two_cores():
        pytest.skip("one core: nothing is forked")
    monkeypatch.setattr(cores, "two_cores", lambda: fork)
    with cores.forked_steps(steps_of, 3) as theirs:
        assert (theirs.next() != os.getpid()) == fork
        assert theirs.next() == [0, 1, 2]
        with pytest.raises(ValueError, match="^after two steps$"):
            theirs.next()


def test_the_forked_process_is_gone_when_the_block_ends_with_steps_unasked():
    if not cores.two_cores():
        pytest.skip("one core: nothing is forked")
    with cores.forked_steps(endless) as theirs:
        pid = theirs.next()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def dies():
    os._exit(3)  # as the kernel's out-of-memory killer would end it, with no word
    yield 1


def test_a_forked_process_that_dies_is_an_error_that_says_so():
    if not cores.two_cores():
        pytest.skip("one core: nothing is forked")
    with cores.forked_steps(dies) as theirs:
        with pytest.raises(ChildProcessError, match=r"^the forked process ended without its result \(exit code 3\)$"):
            theirs.next()


class TwoPartError(ValueError):
    def __init__(self, what, where):
        super().__init__(f"{what} at {where}")


def fails_oddly():
    raise TwoPartError("no space", "line 3")
    yield


@pytest.mark.parametrize("fork", [True, False])
def test_an_error_that_cannot_be_unpickled_comes_back_as_its_text_in_the_class_above_it(fork, monkeypatch):
    if fork and not cores.two_cores():
        pytest.skip("one core: nothing is forked")
    monkeypatch.setattr(cores, "two_cores", lambda: fork)
    with cores.forked_steps(fails_oddly) as theirs:
        with pytest.raises(ValueError, match="^no space at line 3$"):
            theirs.next()
