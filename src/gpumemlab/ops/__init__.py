"""The library: fast kernels on CuPy arrays (and anything with __cuda_array_interface__)."""
