	.file	"kernels.c"
	.text
	.p2align 4
	.globl	ft_touch
	.type	ft_touch, @function
ft_touch:
	testq	%rsi, %rsi
	je	.L1
	xorl	%eax, %eax
	.p2align 4,,10
	.p2align 3
.L3:
	addq	$1, %rax
	movb	%cl, (%rdi)
	addq	%rdx, %rdi
	cmpq	%rax, %rsi
	jne	.L3
.L1:
	ret
	.size	ft_touch, .-ft_touch
	.p2align 4
	.globl	ft_fill
	.type	ft_fill, @function
ft_fill:
	addq	%rsi, %rdx
	cmpq	%rdx, %rsi
	jnb	.L9
	movq	%rsi, %r8
	leaq	(%rdi,%rsi,8), %rax
	leaq	(%rdi,%rdx,8), %rdx
	imulq	%rcx, %r8
	.p2align 4,,10
	.p2align 3
.L11:
	movq	%r8, (%rax)
	addq	$8, %rax
	addq	%rcx, %r8
	cmpq	%rdx, %rax
	jne	.L11
.L9:
	ret
	.size	ft_fill, .-ft_fill
	.p2align 4
	.globl	ft_touch_planted
	.type	ft_touch_planted, @function
ft_touch_planted:
	pushq	%rbp
	pushq	%rbx
	movq	%r8, %rbx
	subq	$24, %rsp
	testq	%rsi, %rsi
	je	.L14
	xorl	%eax, %eax
	.p2align 4,,10
	.p2align 3
.L15:
	addq	$1, %rax
	movb	%cl, (%rdi)
	addq	%rdx, %rdi
	cmpq	%rax, %rsi
	jne	.L15
.L14:
	movq	%rsp, %rbp
	movl	$1, %edi
	movq	%rbp, %rsi
	call	clock_gettime@PLT
	imulq	$1000000000, (%rsp), %rax
	addq	8(%rsp), %rax
	addq	%rax, %rbx
	.p2align 4,,10
	.p2align 3
.L16:
	movq	%rbp, %rsi
	movl	$1, %edi
	call	clock_gettime@PLT
	imulq	$1000000000, (%rsp), %rax
	addq	8(%rsp), %rax
	cmpq	%rax, %rbx
	jg	.L16
	addq	$24, %rsp
	popq	%rbx
	popq	%rbp
	ret
	.size	ft_touch_planted, .-ft_touch_planted
	.p2align 4
	.globl	ft_sum_bytes
	.type	ft_sum_bytes, @function
ft_sum_bytes:
	testq	%rsi, %rsi
	je	.L26
	xorl	%eax, %eax
	xorl	%ecx, %ecx
	.p2align 4,,10
	.p2align 3
.L25:
	movzbl	(%rdi), %r8d
	addq	$1, %rax
	addq	%rdx, %rdi
	addq	%r8, %rcx
	cmpq	%rax, %rsi
	jne	.L25
	movq	%rcx, %rax
	ret
	.p2align 4,,10
	.p2align 3
.L26:
	xorl	%ecx, %ecx
	movq	%rcx, %rax
	ret
	.size	ft_sum_bytes, .-ft_sum_bytes
	.p2align 4
	.globl	ft_sum_words
	.type	ft_sum_words, @function
ft_sum_words:
	testq	%rsi, %rsi
	je	.L31
	leaq	(%rdi,%rsi,8), %rdx
	xorl	%eax, %eax
	.p2align 4,,10
	.p2align 3
.L30:
	addq	(%rdi), %rax
	addq	$8, %rdi
	cmpq	%rdx, %rdi
	jne	.L30
	ret
	.p2align 4,,10
	.p2align 3
.L31:
	xorl	%eax, %eax
	ret
	.size	ft_sum_words, .-ft_sum_words
	.p2align 4
	.globl	ft_touch_timed
	.type	ft_touch_timed, @function
ft_touch_timed:
	pushq	%r15
	movq	%rdi, %r15
	movl	$1, %edi
	pushq	%r14
	movq	%r8, %r14
	pushq	%r13
	movl	%ecx, %r13d
	pushq	%r12
	movq	%rdx, %r12
	pushq	%rbp
	pushq	%rbx
	movq	%rsi, %rbx
	subq	$40, %rsp
	movq	%rsi, (%rsp)
	leaq	16(%rsp), %rsi
	movq	%rsi, 8(%rsp)
	call	clock_gettime@PLT
	imulq	$1000000000, 16(%rsp), %rdx
	addq	24(%rsp), %rdx
	testq	%rbx, %rbx
	je	.L33
	movq	%rdx, %rbp
	xorl	%ebx, %ebx
	.p2align 4,,10
	.p2align 3
.L35:
	movb	%r13b, (%r15)
	movq	8(%rsp), %rsi
	movl	$1, %edi
	addq	%r12, %r15
	call	clock_gettime@PLT
	movq	%rbp, %rsi
	imulq	$1000000000, 16(%rsp), %rdx
	addq	24(%rsp), %rdx
	movq	%rdx, %rax
	movq	%rdx, %rbp
	subq	%rsi, %rax
	movq	%rax, (%r14,%rbx,8)
	addq	$1, %rbx
	cmpq	%rbx, (%rsp)
	jne	.L35
.L33:
	addq	$40, %rsp
	popq	%rbx
	popq	%rbp
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	ret
	.size	ft_touch_timed, .-ft_touch_timed
	.p2align 4
	.globl	ft_touch_timed_walk
	.type	ft_touch_timed_walk, @function
ft_touch_timed_walk:
	pushq	%r15
	movq	%rdi, %r15
	movl	$1, %edi
	pushq	%r14
	movq	%r8, %r14
	pushq	%r13
	movl	%ecx, %r13d
	pushq	%r12
	movq	%rdx, %r12
	pushq	%rbp
	pushq	%rbx
	movq	%rsi, %rbx
	subq	$40, %rsp
	movq	%rsi, (%rsp)
	leaq	16(%rsp), %rsi
	movq	%rsi, 8(%rsp)
	call	clock_gettime@PLT
	imulq	$1000000000, 16(%rsp), %rdx
	addq	24(%rsp), %rdx
	testq	%rbx, %rbx
	je	.L41
	movq	%rdx, %rbp
	xorl	%ebx, %ebx
	.p2align 4,,10
	.p2align 3
.L43:
	movb	%r13b, (%r15)
	movq	8(%rsp), %rsi
	movl	$1, %edi
	addq	%r12, %r15
	call	clock_gettime@PLT
	movq	%rbp, %rsi
	imulq	$1000000000, 16(%rsp), %rdx
	addq	24(%rsp), %rdx
	movq	%rdx, %rax
	movq	%rdx, %rbp
	subq	%rsi, %rax
	movq	%rax, (%r14,%rbx,8)
	addq	$1, %rbx
	cmpq	%rbx, (%rsp)
	jne	.L43
.L41:
	addq	$40, %rsp
	popq	%rbx
	popq	%rbp
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	ret
	.size	ft_touch_timed_walk, .-ft_touch_timed_walk
	.p2align 4
	.globl	ft_touch_timed_tsc
	.type	ft_touch_timed_tsc, @function
ft_touch_timed_tsc:
	movq	%rdx, %r10
	movl	%ecx, %r11d
	rdtscp
	salq	$32, %rdx
	orq	%rdx, %rax
	testq	%rsi, %rsi
	je	.L57
	pushq	%rbx
	movq	%rsi, %r9
	xorl	%esi, %esi
	.p2align 4,,10
	.p2align 3
.L51:
	movq	%rax, %rbx
	movb	%r11b, (%rdi)
	rdtscp
	salq	$32, %rdx
	addq	%r10, %rdi
	orq	%rdx, %rax
	movq	%rax, %rdx
	subq	%rbx, %rdx
	movq	%rdx, (%r8,%rsi,8)
	addq	$1, %rsi
	cmpq	%rsi, %r9
	jne	.L51
	popq	%rbx
	ret
	.p2align 4,,10
	.p2align 3
.L57:
	ret
	.size	ft_touch_timed_tsc, .-ft_touch_timed_tsc
	.p2align 4
	.globl	ft_touch_timed_walk_tsc
	.type	ft_touch_timed_walk_tsc, @function
ft_touch_timed_walk_tsc:
	movq	%rdx, %r10
	movl	%ecx, %r11d
	rdtscp
	salq	$32, %rdx
	orq	%rdx, %rax
	testq	%rsi, %rsi
	je	.L68
	pushq	%rbx
	movq	%rsi, %r9
	xorl	%esi, %esi
	.p2align 4,,10
	.p2align 3
.L62:
	movq	%rax, %rbx
	movb	%r11b, (%rdi)
	rdtscp
	salq	$32, %rdx
	addq	%r10, %rdi
	orq	%rdx, %rax
	movq	%rax, %rdx
	subq	%rbx, %rdx
	movq	%rdx, (%r8,%rsi,8)
	addq	$1, %rsi
	cmpq	%rsi, %r9
	jne	.L62
	popq	%rbx
	ret
	.p2align 4,,10
	.p2align 3
.L68:
	ret
	.size	ft_touch_timed_walk_tsc, .-ft_touch_timed_walk_tsc
	.ident	"GCC: (Debian 12.2.0-14+deb12u1) 12.2.0"
	.section	.note.GNU-stack,"",@progbits
