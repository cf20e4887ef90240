"""Where a task's stages run: this machine's sandbox (`local`) or Harbor (`harbor`).

A service the stages share, owned by none of them: drafting, quality, validation and evaluation
import it, and it imports no stage. `local/` is this machine's sandbox and everything it needs;
`runner` is the protocol validation's runners implement (`LocalRunner`, `HarborRunner`); `spec`
is the environment a command chose, parsed once into an `EnvironmentSpec`; `build` turns a spec
into the local sandbox's and Harbor's options; `process` starts every child process; `harbor`
launches Harbor and holds its options; `egress` is a sandbox's network allow-list.
"""
