"""Put on PYTHONPATH, this makes every Python process of a book build fail as soon as it
trains: pusupport.core.training's loop raises once the module is loaded. `make test`'s
nbval step executes the smoke book again into its own output folder with it, so that
book built a second time must read every run from the run store (nothing trained)."""
import importlib.abc
import importlib.util
import sys


def forbidden(*args, **kwargs):
    raise RuntimeError("this build trained a run: every run should have been read from the "
                       "run store of its output folder (tests/no_training is on PYTHONPATH)")


class NoTraining(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "pusupport.core.training":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            module.fit = forbidden
        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, NoTraining())
