"""The local environment: a bundle's scripts run on this machine, with no Docker engine.

* `phases`: a task prepared once, then agent and verifier phases on fresh copies of its trees
  (`TaskPhases`, the hook validation, drafting, quality and evaluation share), and the scripts
  they run (`_scripts`);
* `verifier`: one verifier run as the host sees it, and what its log says;
* `sandbox`: the isolated workspace (bubblewrap), held at its `_gate` until it is set up, with
  the task's resources as a control group (`cgroup`), leased uids (`uids`), a disk of its own
  (`disk`), all capped by the host's `ceilings`, covering the host's private entries found by
  one walk per run (`_one_walk`);
* setup: the host's network configuration and its failures (`host_network`, `network_probe`),
  the download caches setups share (`downloads`), dependency seeds (`seeds`), prepared workspaces
  parked for the next preparation (`workspaces`), and why a setup failed (`setup_cause`);
* `sharing`: the machine the test runs share.
"""
