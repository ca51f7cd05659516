# ---- CUDA backend ------------------------------------------------------------------
# wok links no CUDA library: the driver and NVRTC are opened at run time
# (runtime/cuda/cuda_driver.h, runtime/cuda/nvrtc_loader.h). What this file adds
# to the static library `wok`:
#  - templates/* and runtime/kernels/cuda/*.cu embedded as byte arrays
#    (cmake/embed_files.cmake), so nothing is read from disk at run time;
#  - when CMake finds nvcc, the precompiled kernels of runtime/kernels/cuda/
#    (full, movement, matmul, reductions) compiled to fatbins (nvcc --fatbin)
#    and embedded the same way, loaded at run time with cuModuleLoadData.
#    Without nvcc they are compiled by NVRTC the first time a GPU needs
#    them. The elementwise ops have no .cu file: their kernels are rendered
#    from their formulas and compiled by NVRTC at first use
#    (runtime/cuda/cuda_formula_kernel.cpp).
option(WOK_BUILD_CUDA_KERNELS "Compile the precompiled CUDA kernels with nvcc when the toolkit is found" ON)
set(WOK_CUDA_ARCHS "80;90" CACHE STRING
    "GPU architectures of the precompiled CUDA kernels (SASS for each, plus PTX of the first for newer GPUs)")

file(GLOB WOK_CUDA_TEMPLATES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/templates/*.cuh ${CMAKE_SOURCE_DIR}/templates/*.cu.in)
file(GLOB WOK_CUDA_KERNEL_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/runtime/kernels/cuda/*.cu)
set(WOK_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${WOK_GENERATED_DIR})

set(WOK_EMBED_ENTRIES)
set(WOK_EMBED_DEPENDS ${WOK_CUDA_TEMPLATES} ${WOK_CUDA_KERNEL_SOURCES})
foreach(path ${WOK_CUDA_TEMPLATES})
  get_filename_component(name ${path} NAME)
  list(APPEND WOK_EMBED_ENTRIES "templates/${name}=${path}")
endforeach()
foreach(path ${WOK_CUDA_KERNEL_SOURCES})
  get_filename_component(name ${path} NAME_WE)
  list(APPEND WOK_EMBED_ENTRIES "kernels/${name}=${path}")
endforeach()

set(WOK_HAVE_NVCC OFF)
if(WOK_BUILD_CUDA_KERNELS)
  include(CheckLanguage)
  check_language(CUDA)
  # check_language keeps a CMAKE_CUDA_COMPILER given on the command line
  # without trying it, so a path that does not exist is caught here.
  if(CMAKE_CUDA_COMPILER AND EXISTS "${CMAKE_CUDA_COMPILER}")
    enable_language(CUDA)
    set(WOK_HAVE_NVCC ON)
  endif()
endif()

if(WOK_HAVE_NVCC)
  list(GET WOK_CUDA_ARCHS 0 wok_first_arch)
  set(wok_codes)
  foreach(arch ${WOK_CUDA_ARCHS})
    list(APPEND wok_codes sm_${arch})
  endforeach()
  list(APPEND wok_codes compute_${wok_first_arch})
  list(JOIN wok_codes "," wok_codes)
  # One front-end pass (compute_<first>) feeds every SASS target and the PTX.
  # -compress-all: the fatbins are embedded in every binary that links wok
  # (about 10x smaller; the driver decompresses at load).
  set(WOK_NVCC_FLAGS -std=c++17 -O3 -fmad=false -Xfatbin=-compress-all -I${CMAKE_SOURCE_DIR}/templates
      "-gencode=arch=compute_${wok_first_arch},code=[${wok_codes}]")
  foreach(path ${WOK_CUDA_KERNEL_SOURCES})
    get_filename_component(name ${path} NAME_WE)
    set(fatbin ${WOK_GENERATED_DIR}/${name}.fatbin)
    add_custom_command(OUTPUT ${fatbin}
      COMMAND ${CMAKE_CUDA_COMPILER} --fatbin ${WOK_NVCC_FLAGS} -o ${fatbin} ${path}
      DEPENDS ${path} ${WOK_CUDA_TEMPLATES}
      COMMENT "nvcc: precompiled CUDA kernels ${name}.cu -> fatbin (sm_${WOK_CUDA_ARCHS})"
      VERBATIM)
    list(APPEND WOK_EMBED_ENTRIES "fatbin/${name}=${fatbin}")
    list(APPEND WOK_EMBED_DEPENDS ${fatbin})
  endforeach()
  message(STATUS "wok: CUDA toolkit found (${CMAKE_CUDA_COMPILER}); precompiled CUDA kernels for sm_${WOK_CUDA_ARCHS}")
else()
  message(STATUS "wok: no CUDA toolkit (nvcc) found; skipping the precompiled CUDA kernels' fatbins "
                 "(NVRTC compiles them at first use on a GPU machine). wok builds and runs without CUDA.")
endif()

set(WOK_EMBED_LIST ${WOK_GENERATED_DIR}/embedded_files.txt)
file(WRITE ${WOK_EMBED_LIST}.in "${WOK_EMBED_ENTRIES}")
configure_file(${WOK_EMBED_LIST}.in ${WOK_EMBED_LIST} COPYONLY)  # rewritten only on change
add_custom_command(OUTPUT ${WOK_GENERATED_DIR}/embedded_files.cpp
  COMMAND ${CMAKE_COMMAND} -DOUTPUT=${WOK_GENERATED_DIR}/embedded_files.cpp -DENTRIES_FILE=${WOK_EMBED_LIST}
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake
  DEPENDS ${WOK_EMBED_DEPENDS} ${WOK_EMBED_LIST} ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake
  COMMENT "Embedding CUDA templates and kernels"
  VERBATIM)
target_sources(wok PRIVATE ${WOK_GENERATED_DIR}/embedded_files.cpp)
