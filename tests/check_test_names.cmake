# cmake -P check_test_names.cmake EXE...: fails when a Catch2 test name of any EXE contains a
# character that breaks its CTest registration by name (tests/CMakeLists.txt says why).
set(bad "")
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 3 ${last})
  set(exe "${CMAKE_ARGV${i}}")
  execute_process(COMMAND "${exe}" --list-test-names-only OUTPUT_VARIABLE names
                  RESULT_VARIABLE rc)
  if(NOT rc MATCHES "^[0-9]+$")  # Catch2 v2 exits with the number of tests it listed
    message(FATAL_ERROR "${exe}: cannot list its tests: ${rc}")
  endif()
  string(REPLACE ";" "<SEMICOLON>" names "${names}")
  string(REPLACE "\n" ";" lines "${names}")
  foreach(line IN LISTS lines)
    if(line MATCHES "<SEMICOLON>|\\[|\\]|\\\\")
      string(REPLACE "<SEMICOLON>" ";" line "${line}")
      string(APPEND bad "  ${exe}: '${line}'\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "test names CTest cannot run by name (no ';', '[', ']' or '\\'):\n${bad}")
endif()
message(STATUS "every test name registers whole")
