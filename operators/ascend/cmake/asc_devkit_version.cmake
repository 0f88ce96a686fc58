# asc-devkit version, as ops-blas reads it (cmake/asc_devkit_version.cmake): ASC_DEVKIT_MAJOR / ASC_DEVKIT_MINOR from
# ASC_VERSION_HEADER (asc_devkit_version.h; 0.0 when absent). The arch35 tensor_api kernels need 9.1 or later, compared
# as a version (10.0 passes; a test of MINOR > 0 alone rejected it). Included by operators/ascend/CMakeLists.txt; runs
# alone as `cmake -DASC_VERSION_HEADER=<file> -P asc_devkit_version.cmake` (tests/kernels/test_kernel_check.py).
set(ASC_DEVKIT_MAJOR 0)
set(ASC_DEVKIT_MINOR 0)
if(EXISTS "${ASC_VERSION_HEADER}")
    file(READ "${ASC_VERSION_HEADER}" ASC_VERSION_TEXT)
    if(ASC_VERSION_TEXT MATCHES "#define ASC_DEVKIT_MAJOR ([0-9]+)")
        set(ASC_DEVKIT_MAJOR "${CMAKE_MATCH_1}")
    endif()
    if(ASC_VERSION_TEXT MATCHES "#define ASC_DEVKIT_MINOR ([0-9]+)")
        set(ASC_DEVKIT_MINOR "${CMAKE_MATCH_1}")
    endif()
endif()
if("${ASC_DEVKIT_MAJOR}.${ASC_DEVKIT_MINOR}" VERSION_LESS "9.1")
    message(FATAL_ERROR "asc-devkit ${ASC_DEVKIT_MAJOR}.${ASC_DEVKIT_MINOR} (${ASC_VERSION_HEADER}): the arch35 "
                        "tensor_api kernels need 9.1 or later")
endif()
