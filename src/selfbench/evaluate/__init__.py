"""Evaluate coding agents on a benchmark: trials, classification, results, reports."""

from __future__ import annotations

from selfbench.evaluate.agents import (
    INSTRUCTION_ENV,
    INSTRUCTION_FILE_ENV,
    USAGE_PREFIX,
    AgentSpec,
    BuiltinAgent,
    CommandAgent,
    EvalError,
    HarborAgent,
    HarnessAgent,
    Usage,
    parse_agent_spec,
    parse_agent_specs,
    parse_usage,
)
from selfbench.evaluate.bench import Benchmark, BenchTask, open_benchmark
from selfbench.evaluate.classify import TrialFacts, Verdict, classify, reclassify
from selfbench.evaluate.report import FORMATS, render_report
from selfbench.evaluate.results import (
    RESULTS_FILE,
    Recheck,
    ResultsLog,
    TrialKey,
    TrialRecord,
    read_results,
)
from selfbench.evaluate.run import EvalOptions, run_eval
from selfbench.evaluate.summary import AgentSummary, Summary, build_summary

__all__ = [
    "FORMATS",
    "INSTRUCTION_ENV",
    "INSTRUCTION_FILE_ENV",
    "RESULTS_FILE",
    "USAGE_PREFIX",
    "AgentSpec",
    "AgentSummary",
    "BenchTask",
    "Benchmark",
    "BuiltinAgent",
    "CommandAgent",
    "EvalError",
    "EvalOptions",
    "HarborAgent",
    "HarnessAgent",
    "Recheck",
    "ResultsLog",
    "Summary",
    "TrialFacts",
    "TrialKey",
    "TrialRecord",
    "Usage",
    "Verdict",
    "build_summary",
    "classify",
    "open_benchmark",
    "parse_agent_spec",
    "parse_agent_specs",
    "parse_usage",
    "read_results",
    "reclassify",
    "render_report",
    "run_eval",
]
