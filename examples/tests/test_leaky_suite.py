"""A small test module that breaks several flake8-hermetic rules on purpose.

Run the pack on it:  python -m flake8 --isolated --select=HRM --exit-zero examples/
(``--select=HRM`` also turns on the rules that are off by default, such as HRM107 and HRM201.)
"""

import os
import shutil
import subprocess as sp
import tempfile
import time
import unittest
from os import chdir


def test_build_in_scratch_dir():
    sp.run(["make", "all"], check=True)  # builds in whatever directory pytest was started from
    scratch = tempfile.mkdtemp()  # never removed
    chdir(scratch)  # every later test on this worker now runs in scratch
    assert os.listdir(".")


def test_server_comes_up():
    os.environ["APP_MODE"] = "test"  # leaks into the next test
    time.sleep(2)  # a guess at how long the server needs
    assert True


class CacheTests(unittest.TestCase):
    def setUp(self):
        self.root = os.path.abspath("cache")  # in the checkout: a leftover meets the next run
        os.mkdir(self.root)
        with open(os.path.join(self.root, "index"), "w") as index:  # may fail after the directory exists
            index.write("{}")

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)  # skipped if setUp fails halfway

    def test_cache_dir(self):
        with open("/tmp/cache-marker", "w") as handle:  # shared by every run on the host
            handle.write("x")
        self.assertTrue(os.path.exists(os.path.expanduser("~/.cache")))
