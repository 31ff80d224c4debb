# Every target bootstraps the local virtual environment itself, so a fresh clone
# needs only Python 3.11+, a C compiler and make (node and rustc for those bots).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv bots test lint demo tournament-demo serve-demo bench schemas clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## Build the compiled sample bots (C, Rust) into sample_bots/bin/.
bots:
	$(MAKE) -C sample_bots

## Lint and format check, then the whole test suite: two test files at a time (each
## file on one worker, so its module fixtures are made once; in the order of
## tests/conftest.py, longest first, not pytest-xdist's own by count), with the type
## check beside it at a lower priority (that run leaves some CPU idle while servers,
## browsers and clusters start), then the tests that measure CPU or latency, alone.
## The suite starts hundreds of referee and bot processes: their modules' bytecode is
## compiled first, as for bench, so that none of them compiles it again when
## PYTHONDONTWRITEBYTECODE is set. The plugins pytest loads are named, not found:
## pytest rewrites the asserts of every module of a plugin it finds installed
## (Hypothesis's and anyio's whole packages), again in each process when
## PYTHONDONTWRITEBYTECODE keeps it from caching them. The second run reads only the
## files that mark tests alone, without Hypothesis, which none of them uses.
ALONE_FILES = $(shell grep -l 'pytest.mark.alone' tests/test_*.py)
PYTEST := PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(PY) -m pytest -q

test: venv bots
	$(PY) -m ruff check referee tests bench sample_bots
	$(PY) -m ruff format --check referee tests bench sample_bots
	$(PY) -m compileall -q referee sample_bots/python tests/zoo
	nice -n 10 $(PY) -m mypy referee > $(VENV)/mypy.out 2>&1 & mypy=$$!; \
	$(PYTEST) -p xdist.plugin -p _hypothesis_pytestplugin \
		-n 2 --dist loadfile --no-loadscope-reorder -m "not alone"; tests=$$?; \
	wait $$mypy; typed=$$?; cat $(VENV)/mypy.out; [ $$tests = 0 ] && [ $$typed = 0 ]
	$(PYTEST) -m alone $(ALONE_FILES)

lint: venv
	$(PY) -m ruff check referee tests bench sample_bots
	$(PY) -m ruff format --check referee tests bench sample_bots
	$(PY) -m mypy referee

## A full 10,000-round Chaos League match between two sample bots; replay in replays/.
demo: venv bots
	$(PY) -m referee match iocaine trickster --seed 2026 --replay replays/demo.jsonl
	$(PY) -m referee verify replays/demo.jsonl

## A league of the sample bots (pool and finals) as in examples/league.toml; each run
## plays a fresh one (the tournament command itself never overwrites a league).
tournament-demo: venv bots
	rm -rf out/league
	$(PY) -m referee tournament --config examples/league.toml --out out/league

## A competition server with the sample bots on its ladder: http://127.0.0.1:8080
## (state in competition-data/; stop with Ctrl-C, run again to carry on).
serve-demo: venv bots
	$(PY) -m referee serve --config examples/competition.toml --data competition-data

## Benchmarks: ratios against a C floor and peers (not part of the tests). The
## referee's bytecode is compiled first, as pip does at install: an editable install
## with PYTHONDONTWRITEBYTECODE set would otherwise compile it again in every process.
bench: venv bots
	$(PY) -m compileall -q referee
	$(PY) bench/run.py $(BENCH_ARGS)

## Regenerate protocol/schemas/*.json from the message Structs.
schemas: venv
	$(PY) -m referee schemas protocol/schemas

clean:
	rm -rf $(VENV) sample_bots/bin bench/bin replays out competition-data .pytest_cache .mypy_cache .ruff_cache
