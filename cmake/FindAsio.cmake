# FindAsio: standalone Asio (header-only; Debian's libasio-dev ships no CMake
# package). Defines Asio::Asio (include dir + ASIO_STANDALONE), Asio_FOUND,
# Asio_VERSION and the cache entry Asio_INCLUDE_DIR (set it to pick a copy).
# Used by weft's build and installed next to weftConfig.cmake, so the include
# dir is looked up on the consumer's machine rather than recorded in weft's
# exported targets.
find_path(Asio_INCLUDE_DIR NAMES asio.hpp DOC "Directory holding standalone Asio's asio.hpp")
mark_as_advanced(Asio_INCLUDE_DIR)

if(Asio_INCLUDE_DIR AND EXISTS "${Asio_INCLUDE_DIR}/asio/version.hpp")
  file(STRINGS "${Asio_INCLUDE_DIR}/asio/version.hpp" _asio_version_line
       REGEX "^#define ASIO_VERSION [0-9]+")
  if(_asio_version_line MATCHES "ASIO_VERSION ([0-9]+)")
    math(EXPR _asio_major "${CMAKE_MATCH_1} / 100000")
    math(EXPR _asio_minor "${CMAKE_MATCH_1} / 100 % 1000")
    math(EXPR _asio_patch "${CMAKE_MATCH_1} % 100")
    set(Asio_VERSION "${_asio_major}.${_asio_minor}.${_asio_patch}")
  endif()
  unset(_asio_version_line)
  unset(_asio_major)
  unset(_asio_minor)
  unset(_asio_patch)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Asio REQUIRED_VARS Asio_INCLUDE_DIR VERSION_VAR Asio_VERSION)

if(Asio_FOUND AND NOT TARGET Asio::Asio)
  add_library(Asio::Asio INTERFACE IMPORTED)
  set_target_properties(Asio::Asio PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${Asio_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS ASIO_STANDALONE)
endif()
