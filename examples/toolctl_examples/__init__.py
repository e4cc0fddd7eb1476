"""Handlers, hooks and transforms for toolctl's example registry (``tools.d/``).

One module per tool. Everything here uses the standard library only, so the example registry runs
on a fresh machine with nothing but toolctl installed. ``toolctl.yaml`` puts ``examples/`` on the
handler path, which makes ``toolctl_examples.<module>:<function>`` importable.
"""
