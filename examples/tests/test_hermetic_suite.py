"""The same tests written hermetically: the pack reports nothing here."""

import subprocess
import sys


def test_build_in_scratch_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run([sys.executable, "-c", "print('built')"], cwd=tmp_path, check=True, timeout=60)
    assert tmp_path.is_dir()


def test_server_mode(monkeypatch):
    monkeypatch.setenv("APP_MODE", "test")
    assert True


def test_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    marker = tmp_path / "cache-marker"
    marker.write_text("x")
    assert marker.read_text() == "x"
