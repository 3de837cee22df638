# -Wall -Wextra -Werror for mpix's own targets (not for third-party code).
function(mpix_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Werror>)
endfunction()
