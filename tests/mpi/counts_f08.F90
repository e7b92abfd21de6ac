! SPDX-License-Identifier: BSD-3-Clause
!
! counts_f08.F90 - `use mpi_f08` point-to-point and collectives with counts
! of the default INTEGER kind, or (-DBIG) of INTEGER(MPI_COUNT_KIND): MPI
! 4's large-count procedures (Open MPI 6's mpi_send_c_f08ts_ ...). Needs 4
! ranks. Rank r sends rank r+1 100 doubles (MPI_Send), rank r-1 50 doubles
! (MPI_Isend), rank r+2 10 doubles (MPI_Sendrecv), then 0 broadcasts 8
! doubles and all reduce 4: the same profile either way.
#ifdef BIG
#define CNT integer(MPI_COUNT_KIND)
#else
#define CNT integer
#endif
program counts_f08
  use mpi_f08
  implicit none
  integer :: rank, size, nxt, prv, opp
  CNT :: n
  double precision :: a(100), b(100)
  type(MPI_Request) :: r(2)

  a = 1
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  if (size /= 4) call MPI_Abort(MPI_COMM_WORLD, 1)
  nxt = mod(rank + 1, 4)
  prv = mod(rank + 3, 4)
  opp = mod(rank + 2, 4)
  n = 100
  if (mod(rank, 2) == 0) then
    call MPI_Send(a, n, MPI_DOUBLE_PRECISION, nxt, 1, MPI_COMM_WORLD)
    call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, prv, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  else
    call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, prv, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Send(a, n, MPI_DOUBLE_PRECISION, nxt, 1, MPI_COMM_WORLD)
  end if
  n = 50
  call MPI_Irecv(b, n, MPI_DOUBLE_PRECISION, nxt, 2, MPI_COMM_WORLD, r(1))
  call MPI_Isend(a, n, MPI_DOUBLE_PRECISION, prv, 2, MPI_COMM_WORLD, r(2))
  call MPI_Waitall(2, r, MPI_STATUSES_IGNORE)
  n = 10
  call MPI_Sendrecv(a, n, MPI_DOUBLE_PRECISION, opp, 3, b, n, MPI_DOUBLE_PRECISION, opp, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  n = 8
  call MPI_Bcast(a, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  n = 4
  call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Finalize()
end program counts_f08
