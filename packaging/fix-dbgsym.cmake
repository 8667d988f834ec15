# CPack post-build script (CPACK_POST_BUILD_SCRIPTS): repairs the -dbgsym packages CPack 3.25
# writes. Their md5sums list absolute paths of CPack's staging folder, and they have no
# /usr/share/doc entry, and the debug files keep the executable bit. As dh_strip does, the doc
# folder becomes a link to the main package's (which the dbgsym package depends on) and the
# debug files are 0644. Each .ddeb is unpacked, fixed and packed again.
# CPACK_PACKAGE_FILES: the files this generator wrote, still in CPack's staging folder.
set(llmwb_ddebs ${CPACK_PACKAGE_FILES})
list(FILTER llmwb_ddebs INCLUDE REGEX "-dbgsym_[^/]*\\.ddeb$")
if(NOT llmwb_ddebs)
  return()
endif()
find_program(LLMWB_DPKG_DEB dpkg-deb REQUIRED)
foreach(ddeb IN LISTS llmwb_ddebs)
  get_filename_component(name "${ddeb}" NAME)
  string(REGEX REPLACE "-dbgsym_.*$" "" main_package "${name}")
  set(tree "${CPACK_TOPLEVEL_DIRECTORY}/_llmwb_dbgsym_tree")
  file(REMOVE_RECURSE "${tree}")
  execute_process(COMMAND ${LLMWB_DPKG_DEB} -R "${ddeb}" "${tree}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fix-dbgsym: cannot unpack ${ddeb}")
  endif()
  file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${tree}" "${tree}/usr/*")
  list(SORT files)
  set(md5sums "")
  foreach(f IN LISTS files)
    # Debug files are data (0644), as dh_strip writes them; CPack keeps the executable bit.
    file(CHMOD "${tree}/${f}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
    file(MD5 "${tree}/${f}" sum)
    string(APPEND md5sums "${sum}  ${f}\n")
  endforeach()
  file(WRITE "${tree}/DEBIAN/md5sums" "${md5sums}")
  file(MAKE_DIRECTORY "${tree}/usr/share/doc")
  file(CREATE_LINK "${main_package}" "${tree}/usr/share/doc/${main_package}-dbgsym" SYMBOLIC)
  execute_process(COMMAND ${LLMWB_DPKG_DEB} --root-owner-group --build "${tree}" "${ddeb}"
                  OUTPUT_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fix-dbgsym: cannot pack ${ddeb}")
  endif()
  file(REMOVE_RECURSE "${tree}")
  message(STATUS "fix-dbgsym: ${name}: md5sums relative, doc link to ${main_package}")
endforeach()
