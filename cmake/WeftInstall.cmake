# Install rules and the CMake/pkg-config packages (included by the top-level
# CMakeLists.txt when WEFT_INSTALL is on; never under Emscripten).
#   include/weft/*.h, include/weft/host/*.h   public headers
#   lib/libweft_core.a, lib/libweft_host.a    exported as weft::core, weft::host
#   bin/weft                                  the CLI
#   lib/cmake/weft/                           weftConfig, version, targets
#   lib/pkgconfig/weft.pc
include(CMakePackageConfigHelpers)

set(WEFT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/weft CACHE STRING
    "Where weftConfig.cmake is installed (relative to the prefix)")
set(WEFT_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig CACHE STRING
    "Where weft.pc is installed (relative to the prefix)")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/weft
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS weft_core EXPORT weftTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(WEFT_PC_LIBS " -lweft_core")
set(WEFT_PC_CFLAGS "")

if(TARGET weft_host)
  set(WEFT_INSTALL_HOST TRUE)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/native-host/include/weft/host
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft FILES_MATCHING PATTERN "*.h")
  install(TARGETS weft_host EXPORT weftTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(WEFT_PC_LIBS " -lweft_host -lweft_core -pthread")
  set(WEFT_PC_CFLAGS " -DBOOST_ASIO_NO_DEPRECATED")
else()
  set(WEFT_INSTALL_HOST FALSE)
endif()
if(WEFT_HAVE_ZSTD)
  string(APPEND WEFT_PC_LIBS " -lzstd")  # the core's private dependency (static library)
endif()
if(TARGET weft_cli)
  install(TARGETS weft_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT weftTargets NAMESPACE weft:: FILE weftTargets.cmake DESTINATION ${WEFT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/weftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/weftConfig.cmake INSTALL_DESTINATION ${WEFT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/weftConfig.cmake ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
        DESTINATION ${WEFT_CMAKE_DIR})

# weft.pc finds the prefix from its own location (${pcfiledir}), so it stays
# right under `cmake --install --prefix` and DESTDIR; absolute dirs stay absolute.
if(IS_ABSOLUTE "${WEFT_PKGCONFIG_DIR}")
  set(WEFT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  string(REGEX REPLACE "[^/]+" ".." _weft_up "${WEFT_PKGCONFIG_DIR}")
  set(WEFT_PC_PREFIX "\${pcfiledir}/${_weft_up}")
endif()
foreach(kind INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(WEFT_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(WEFT_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/weft.pc.in ${PROJECT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${WEFT_PKGCONFIG_DIR})
