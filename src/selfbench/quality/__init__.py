"""Quality: is a task worth shipping? Observed by running its tests (SPEC §13, Quality).

* `mutants`: the mutant record both mutators return (`mutate_python`, `mutate_js`);
* `variants` and `scoring`: variants of the gold patch (ablation, mutants), scored in the
  sandbox;
* `verdict`: the one rule from the observations to `ship | review | reject`;
* `api`: `assess_task`, what `selfbench quality`, `draft` and `run` call.

The record it writes is `selfbench.artifacts.quality_record`'s.
"""

__all__: list[str] = []
