"""The artifacts stages hand to each other: one module each, one reader, one writer.

* `task_dir`: an authored task directory (`definition.json`, `test.patch`, `gold.patch`);
* `compiled`: a compiled task, its home (`harbor-task/` beside `definition.json`);
* `validation`: a validation report (`validation.json`);
* `report`: what a validation report holds (`TaskReport`, each run's `RunReport`) and the
  verifier's `reward.json` (`Reward`);
* `draft_record`: a draft's evidence (`draft.json`);
* `provenance`: how a run built its export (the manifest's `provenance`).

The bundle's own paths are `selfbench.bundle.layout`'s, a run directory's `selfbench.run.state`'s
and an export's `selfbench.export.manifest`'s. Every file name is spelled in one module only.
"""

__all__: list[str] = []
