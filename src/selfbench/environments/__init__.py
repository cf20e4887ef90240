"""Where a task's stages run: this machine's sandbox (`local`) or Harbor (`harbor`).

`runner` is the protocol both environments implement (`LocalRunner`, `HarborRunner`); `spec`
is the environment a command chose, parsed once into an `EnvironmentSpec`; `build` turns a spec
into the runner validation uses and the options evaluation's trials use; `process` starts every
child process; `harbor` launches Harbor and holds its options.
"""
