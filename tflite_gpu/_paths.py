"""Where the installed package keeps what C and C++ hosts need (headers, library, CMake package config)."""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _root() -> str:
    # A wheel install keeps include/, lib/ and share/ next to this file. An editable (developer)
    # install keeps them next to the compiled _core module, in the build tree.
    if os.path.isdir(os.path.join(_HERE, "share")):
        return _HERE
    try:
        from . import _core
        d = os.path.dirname(os.path.abspath(_core.__file__))
        if os.path.isdir(os.path.join(d, "share")):
            return d
    except ImportError:
        pass
    return _HERE


def get_include() -> str:
    """Folder holding tflite_gpu/*.h (the public C and C++ API)."""
    return os.path.join(_root(), "include")


def get_cmake_dir() -> str:
    """Folder to give CMake as tflite_gpu_DIR (find_package(tflite_gpu CONFIG))."""
    return os.path.join(_root(), "share", "cmake", "tflite_gpu")


def get_library_dir() -> str:
    return os.path.join(_root(), "lib")
