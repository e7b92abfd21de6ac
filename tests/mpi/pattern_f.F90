! SPDX-License-Identifier: BSD-3-Clause
!
! pattern_f.F90 - the pattern of pattern.c through the Fortran bindings, so
! that the same tests/mpi/pattern*.expected apply. Needs exactly 4 ranks.
! Step 10 (neighbourhood collectives) is the subroutine neighbors, every
! collective blocking and non-blocking the subroutine collectives_both, and
! with the argument "rma" the one-sided calls of pattern.c the subroutine rma,
! as in pattern.c. Built twice (profiler/module.mk): pattern_f with `use mpi`, and
! pattern_f08 (-DF08) with `use mpi_f08`, its TYPE(MPI_*) handles, and the
! optional ierror left out of every call.
#ifdef F08
#define IERR
#define IERR0
#define COMM type(MPI_Comm)
#define DATATYPE type(MPI_Datatype)
#define REQUEST type(MPI_Request)
#define WIN type(MPI_Win)
#else
#define IERR , ierr
#define IERR0 ierr
#define COMM integer
#define DATATYPE integer
#define REQUEST integer
#define WIN integer
#endif
program pattern_f
#ifdef F08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only : c_ptr
#else
  use mpi
#endif
  implicit none
  integer :: rank, size, ierr, i, nxt, prv, opp, hrank, bsize
  COMM :: half, dup
  DATATYPE :: tri
  REQUEST :: p, reqs(4), pa(1)
#ifdef F08
  type(MPI_Status) :: sts(4), st
  type(c_ptr) :: bp
#else
  integer :: sts(MPI_STATUS_SIZE, 4), st(MPI_STATUS_SIZE)
#endif
  integer :: ibuf(100), ibuf2(100), one, all(4)
  double precision :: dbuf(50, 2), drecv(50, 2), two(2), tot(2)
  character(len=8) :: text, arg
  character(len=1000) :: kb
  character, allocatable :: bbuf(:)

  ibuf = 0
  dbuf = 0
  text = 'abcdefg'
  call MPI_Init(IERR0)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERR)
  call MPI_Comm_size(MPI_COMM_WORLD, size IERR)
  if (size /= 4) call MPI_Abort(MPI_COMM_WORLD, 1 IERR)
  nxt = mod(rank + 1, 4)
  prv = mod(rank + 3, 4)
  opp = mod(rank + 2, 4)
  ! 1
  do i = 1, 3
    if (mod(rank, 2) == 0) then
      call MPI_Send(ibuf, 100, MPI_INTEGER, nxt, 1, MPI_COMM_WORLD IERR)
      call MPI_Recv(ibuf2, 100, MPI_INTEGER, prv, 1, MPI_COMM_WORLD, st IERR)
    else
      call MPI_Recv(ibuf2, 100, MPI_INTEGER, prv, 1, MPI_COMM_WORLD, st IERR)
      call MPI_Send(ibuf, 100, MPI_INTEGER, nxt, 1, MPI_COMM_WORLD IERR)
    end if
  end do
  ! 2
  do i = 1, 2
    call MPI_Irecv(drecv(1, i), 50, MPI_DOUBLE_PRECISION, opp, 2, MPI_COMM_WORLD, reqs(2*i-1) IERR)
    call MPI_Isend(dbuf(1, i), 50, MPI_DOUBLE_PRECISION, opp, 2, MPI_COMM_WORLD, reqs(2*i) IERR)
  end do
  call MPI_Waitall(4, reqs, sts IERR)
  ! 3
  if (rank == 0) call MPI_Ssend(text, 7, MPI_CHARACTER, 3, 3, MPI_COMM_WORLD IERR)
  if (rank == 3) call MPI_Recv(text, 7, MPI_CHARACTER, 0, 3, MPI_COMM_WORLD, st IERR)
  ! 4
  if (rank == 1 .or. rank == 2) then
    if (rank == 1) then
      call MPI_Send_init(ibuf, 16, MPI_INTEGER, 2, 4, MPI_COMM_WORLD, p IERR)
    else
      call MPI_Recv_init(ibuf2, 16, MPI_INTEGER, 1, 4, MPI_COMM_WORLD, p IERR)
    end if
    do i = 1, 5
      if (mod(i, 2) == 0) then
        call MPI_Start(p IERR)
      else
        pa(1) = p
        call MPI_Startall(1, pa IERR)
      end if
      call MPI_Wait(p, st IERR)
    end do
    call MPI_Request_free(p IERR)
  end if
  ! 5
  call MPI_Sendrecv(ibuf, 10, MPI_INTEGER, prv, 5, ibuf2, 10, MPI_INTEGER, nxt, 5, &
                    MPI_COMM_WORLD, st IERR)
  call MPI_Sendrecv_replace(dbuf, 3, MPI_DOUBLE_PRECISION, prv, 6, nxt, 6, MPI_COMM_WORLD, st IERR)
  ! 6
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half IERR)
  call MPI_Comm_rank(half, hrank IERR)
  do i = 1, 4
    if (hrank == 0) then
      call MPI_Send(text, 8, MPI_BYTE, 1, 7, half IERR)
    else
      call MPI_Recv(text, 8, MPI_BYTE, 0, 7, half, st IERR)
    end if
  end do
  call MPI_Comm_free(half IERR)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup IERR)
  if (rank == 3) call MPI_Send(kb, 1000, MPI_BYTE, 0, 8, dup IERR)
  if (rank == 0) call MPI_Recv(kb, 1000, MPI_BYTE, 3, 8, dup, st IERR)
  call MPI_Comm_free(dup IERR)
  ! 7
  if (rank == 0) call MPI_Send(ibuf, 100, MPI_INTEGER, MPI_PROC_NULL, 9, MPI_COMM_WORLD IERR)
  ! 8
  call MPI_Type_contiguous(3, MPI_INTEGER, tri IERR)
  call MPI_Type_commit(tri IERR)
  if (rank == 2) call MPI_Send(ibuf, 2, tri, 1, 10, MPI_COMM_WORLD IERR)
  if (rank == 1) call MPI_Recv(ibuf2, 2, tri, 2, 10, MPI_COMM_WORLD, st IERR)
  call MPI_Type_free(tri IERR)
  ! 9
  if (rank == 3) then
    bsize = 20 + MPI_BSEND_OVERHEAD
    allocate(bbuf(bsize))
    call MPI_Buffer_attach(bbuf, bsize IERR)
    call MPI_Bsend(ibuf, 5, MPI_INTEGER, 2, 11, MPI_COMM_WORLD IERR)
#ifdef F08
    call MPI_Buffer_detach(bp, bsize)
#else
    call MPI_Buffer_detach(bbuf, bsize, ierr)
#endif
    deallocate(bbuf)
  end if
  if (rank == 2) call MPI_Recv(ibuf2, 5, MPI_INTEGER, 3, 11, MPI_COMM_WORLD, st IERR)
  ! 10
  call neighbors(rank)
  ! collectives
  call MPI_Bcast(ibuf, 10, MPI_INTEGER, 0, MPI_COMM_WORLD IERR)
  two = (/ 1d0, 2d0 /)
  call MPI_Allreduce(two, tot, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD IERR)
  if (tot(2) /= 8d0) call MPI_Abort(MPI_COMM_WORLD, 1 IERR)
  one = rank
  call MPI_Gather(one, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 3, MPI_COMM_WORLD IERR)
  call MPI_Barrier(MPI_COMM_WORLD IERR)
  call collectives_both(rank)
  call get_command_argument(1, arg)
  if (arg == 'rma') call rma(rank)
  call MPI_Finalize(IERR0)
contains

  ! the one-sided calls of pattern.c, each on its own pair of ranks but
  ! Get_accumulate (on 0 <-> 2 with Fetch_and_op, another size): a fence
  ! epoch (Put, Get, Accumulate, Get_accumulate), then a lock_all epoch (Rput,
  ! Rget, Raccumulate, Rget_accumulate, Fetch_and_op, Compare_and_swap), on a
  ! window of 64 bytes
  subroutine rma(rank)
    integer, intent(in) :: rank
    integer :: ierr, ibuf(7), iv(3), ir(3)
    WIN :: win
    REQUEST :: req(3)
    double precision :: wbuf(8), drecv(2), d, dr, dg(3)
    real :: fv(3), fr(3)
    character(len=9) :: cv
    integer(kind=MPI_ADDRESS_KIND) :: wsize, zero

    ibuf = 0
    iv = (/ 1, 2, 3 /)
    fv = (/ 1, 2, 3 /)
    cv = 'abcdefgh'
    wbuf = 0
    d = 1
    wsize = 64
    zero = 0
    call MPI_Win_create(wbuf, wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win IERR)
    call MPI_Win_fence(0, win IERR)
    if (rank == 0) call MPI_Put(ibuf, 6, MPI_INTEGER, 1, zero, 6, MPI_INTEGER, win IERR)
    if (rank == 2) call MPI_Get(drecv, 2, MPI_DOUBLE_PRECISION, 3, zero, 2, MPI_DOUBLE_PRECISION, &
                                win IERR)
    if (rank == 2) then
      call MPI_Accumulate(ibuf, 7, MPI_INTEGER, 3, 16_MPI_ADDRESS_KIND, 7, MPI_INTEGER, MPI_SUM, &
                          win IERR)
      call MPI_Get_accumulate(fv, 3, MPI_REAL, fr, 3, MPI_REAL, 0, 40_MPI_ADDRESS_KIND, 3, &
                              MPI_REAL, MPI_SUM, win IERR)
    end if
    call MPI_Win_fence(0, win IERR)
    req = MPI_REQUEST_NULL
    call MPI_Win_lock_all(0, win IERR)
    if (rank == 1) then
      call MPI_Rput(cv, 9, MPI_CHARACTER, 0, 16_MPI_ADDRESS_KIND, 9, MPI_CHARACTER, win, &
                    req(1) IERR)
      call MPI_Rget(dg, 3, MPI_DOUBLE_PRECISION, 2, 32_MPI_ADDRESS_KIND, 3, MPI_DOUBLE_PRECISION, &
                    win, req(2) IERR)
      call MPI_Raccumulate(iv, 3, MPI_INTEGER, 2, zero, 3, MPI_INTEGER, MPI_SUM, win, req(3) IERR)
    end if
    if (rank == 3) call MPI_Rget_accumulate(iv, 2, MPI_INTEGER, ir, 2, MPI_INTEGER, 0, zero, 2, &
                                            MPI_INTEGER, MPI_SUM, win, req(1) IERR)
    if (rank == 0) call MPI_Fetch_and_op(d, dr, MPI_DOUBLE_PRECISION, 2, 16_MPI_ADDRESS_KIND, &
                                         MPI_SUM, win IERR)
    if (rank == 1) call MPI_Compare_and_swap(iv(1), iv(2), ir(1), MPI_INTEGER, 3, &
                                             32_MPI_ADDRESS_KIND, win IERR)
    call MPI_Waitall(3, req, MPI_STATUSES_IGNORE IERR)
    call MPI_Win_unlock_all(win IERR)
    call MPI_Win_free(win IERR)
  end subroutine rma

  ! the v-collectives etc. of pattern.c, blocking then as their I- form
  subroutine collectives_both(rank)
    integer, intent(in) :: rank
    integer :: ierr, i
    REQUEST :: req
    integer :: vs(32), vr(32), inc(4), displs(4), two(4), mine(4), rsc(4), ones(4), wd(4)
    DATATYPE :: st(4), rt(4)
    double precision :: d, dr

    vs = 0
    d = 1
    inc = (/ 1, 2, 3, 4 /)
    displs = (/ 0, 4, 8, 12 /)
    two = 2
    mine = rank + 1
    rsc = (/ 1, 2, 1, 2 /)
    ones = 1
    wd = (/ 0, 8, 16, 24 /)
    st = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_DOUBLE_PRECISION /)
    do i = 1, 4
      rt(i) = st(rank + 1)
    end do
    call MPI_Barrier(MPI_COMM_WORLD IERR)
    call MPI_Ibarrier(MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Bcast(vs, 5, MPI_INTEGER, 3, MPI_COMM_WORLD IERR)
    call MPI_Ibcast(vs, 5, MPI_INTEGER, 3, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Reduce(vs, vr, 3, MPI_DOUBLE_PRECISION, MPI_SUM, 2, MPI_COMM_WORLD IERR)
    call MPI_Ireduce(vs, vr, 3, MPI_DOUBLE_PRECISION, MPI_SUM, 2, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Allreduce(vs, vr, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD IERR)
    call MPI_Iallreduce(vs, vr, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Gather(vs, 2, MPI_INTEGER, vr, 2, MPI_INTEGER, 0, MPI_COMM_WORLD IERR)
    call MPI_Igather(vs, 2, MPI_INTEGER, vr, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Scatter(vs, 3, MPI_INTEGER, vr, 3, MPI_INTEGER, 1, MPI_COMM_WORLD IERR)
    call MPI_Iscatter(vs, 3, MPI_INTEGER, vr, 3, MPI_INTEGER, 1, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Allgather(vs, 1, MPI_DOUBLE_PRECISION, vr, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD IERR)
    call MPI_Iallgather(vs, 1, MPI_DOUBLE_PRECISION, vr, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, &
                        req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Alltoall(vs, 2, MPI_INTEGER, vr, 2, MPI_INTEGER, MPI_COMM_WORLD IERR)
    call MPI_Ialltoall(vs, 2, MPI_INTEGER, vr, 2, MPI_INTEGER, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Gatherv(vs, rank + 1, MPI_INTEGER, vr, inc, displs, MPI_INTEGER, 1, MPI_COMM_WORLD IERR)
    call MPI_Igatherv(vs, rank + 1, MPI_INTEGER, vr, inc, displs, MPI_INTEGER, 1, MPI_COMM_WORLD, &
                      req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Scatterv(vs, inc, displs, MPI_INTEGER, vr, rank + 1, MPI_INTEGER, 2, MPI_COMM_WORLD IERR)
    call MPI_Iscatterv(vs, inc, displs, MPI_INTEGER, vr, rank + 1, MPI_INTEGER, 2, MPI_COMM_WORLD, &
                       req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Allgatherv(vs, 2, MPI_INTEGER, vr, two, displs, MPI_INTEGER, MPI_COMM_WORLD IERR)
    call MPI_Iallgatherv(vs, 2, MPI_INTEGER, vr, two, displs, MPI_INTEGER, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Alltoallv(vs, inc, displs, MPI_INTEGER, vr, mine, displs, MPI_INTEGER, MPI_COMM_WORLD &
                       IERR)
    call MPI_Ialltoallv(vs, inc, displs, MPI_INTEGER, vr, mine, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Alltoallw(vs, ones, wd, st, vr, ones, wd, rt, MPI_COMM_WORLD IERR)
    call MPI_Ialltoallw(vs, ones, wd, st, vr, ones, wd, rt, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Reduce_scatter(vs, vr, rsc, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD IERR)
    call MPI_Ireduce_scatter(vs, vr, rsc, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Reduce_scatter_block(vs, vr, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD IERR)
    call MPI_Ireduce_scatter_block(vs, vr, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Scan(d, dr, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD IERR)
    call MPI_Iscan(d, dr, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    if (dr /= rank + 1) call MPI_Abort(MPI_COMM_WORLD, 1 IERR)
    call MPI_Exscan(vs, vr, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD IERR)
    call MPI_Iexscan(vs, vr, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  end subroutine collectives_both

  ! every neighbourhood collective blocking, then as its I- form
  subroutine neighbors(rank)
    integer, intent(in) :: rank
    integer :: ierr, lo, hi, deg, i, up, down
    COMM :: ring, cart, graph, dist
    REQUEST :: req
    integer :: sbuf(16), rbuf(16), dims(2), idx(4), edg(6), rc(2), rd(2)
    integer :: dst(2), src(2), wts(2), sc(2), sd(2), rcv(2), rdv(2), wc(2)
    DATATYPE :: wt(2)
    integer(kind=MPI_ADDRESS_KIND) :: wd(2)
    double precision :: d(1), dr(4)
    logical :: periods(2)

    sbuf = 0
    d = 0
    ! a: Cart 2x2, periods (T, F), cart rank (w+1)%4
    dims = (/ 2, 2 /)
    periods = (/ .true., .false. /)
    call MPI_Comm_split(MPI_COMM_WORLD, 0, mod(rank + 1, 4), ring IERR)
    call MPI_Cart_create(ring, 2, dims, periods, .false., cart IERR)
    call MPI_Cart_shift(cart, 1, 1, lo, hi IERR)
    if ((lo == MPI_PROC_NULL) .eqv. (hi == MPI_PROC_NULL)) call MPI_Abort(MPI_COMM_WORLD, 1 IERR)
    call MPI_Neighbor_alltoall(sbuf, 3, MPI_INTEGER, rbuf, 3, MPI_INTEGER, cart IERR)
    call MPI_Ineighbor_alltoall(sbuf, 3, MPI_INTEGER, rbuf, 3, MPI_INTEGER, cart, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Neighbor_allgather(d, 1, MPI_DOUBLE_PRECISION, dr, 1, MPI_DOUBLE_PRECISION, cart IERR)
    call MPI_Ineighbor_allgather(d, 1, MPI_DOUBLE_PRECISION, dr, 1, MPI_DOUBLE_PRECISION, cart, &
                                 req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Comm_free(cart IERR)
    call MPI_Comm_free(ring IERR)
    ! b: Graph, the line 0-1-2-3
    idx = (/ 1, 3, 5, 6 /)
    edg = (/ 1, 0, 2, 1, 3, 2 /)
    deg = 2
    if (rank == 0 .or. rank == 3) deg = 1
    do i = 1, deg
      rc(i) = 1 + edg(idx(rank + 1) - deg + i)
    end do
    rd = (/ 0, 4 /)
    call MPI_Graph_create(MPI_COMM_WORLD, 4, idx, edg, .false., graph IERR)
    call MPI_Neighbor_allgatherv(sbuf, rank + 1, MPI_INTEGER, rbuf, rc, rd, MPI_INTEGER, graph IERR)
    call MPI_Ineighbor_allgatherv(sbuf, rank + 1, MPI_INTEGER, rbuf, rc, rd, MPI_INTEGER, graph, &
                                  req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Comm_free(graph IERR)
    ! c: Dist_graph, destinations r+1, r-1
    up = mod(rank + 1, 4)
    down = mod(rank + 3, 4)
    dst = (/ up, down /)
    src = (/ down, up /)
    wts = (/ 1, 1 /)
    sc = (/ rank + 1, 2 /)
    if (rank == 0) sc(2) = 0
    rcv = (/ down + 1, 2 /)
    if (up == 0) rcv(2) = 0
    sd = (/ 0, 4 /)
    rdv = (/ 0, 4 /)
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, wts, 2, dst, wts, &
                                        MPI_INFO_NULL, .false., dist IERR)
    call MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INTEGER, rbuf, rcv, rdv, MPI_INTEGER, dist IERR)
    call MPI_Ineighbor_alltoallv(sbuf, sc, sd, MPI_INTEGER, rbuf, rcv, rdv, MPI_INTEGER, dist, &
                                 req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    wc = (/ 1, 3 /)
    wd = (/ 0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND /)
    wt = (/ MPI_DOUBLE_PRECISION, MPI_INTEGER /)
    call MPI_Neighbor_alltoallw(sbuf, wc, wd, wt, rbuf, wc, wd, wt, dist IERR)
    call MPI_Ineighbor_alltoallw(sbuf, wc, wd, wt, rbuf, wc, wd, wt, dist, req IERR)
    call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
    call MPI_Comm_free(dist IERR)
  end subroutine neighbors
end program pattern_f
