"""Where the installed package keeps what C++ hosts need (headers, library, CMake package config)."""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """Folder holding tflite_gpu/*.h (the public C++ API)."""
    return os.path.join(_HERE, "include")


def get_cmake_dir() -> str:
    """Folder to give CMake as tflite_gpu_DIR (find_package(tflite_gpu CONFIG))."""
    return os.path.join(_HERE, "share", "cmake", "tflite_gpu")


def get_library_dir() -> str:
    return os.path.join(_HERE, "lib")
